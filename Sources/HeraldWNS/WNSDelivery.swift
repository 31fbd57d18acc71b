/// What WNS said about a notification it accepted (200).
package struct WNSDelivery: Sendable, Equatable {
    /// `X-WNS-Status`: what WNS did with the notification.
    package enum Status: Sendable, Equatable {
        /// Received and delivered, or queued for a device that is offline.
        case received
        /// Dropped: an error, the client refused it, or a toast for a device that is offline.
        case dropped
        /// Dropped because this channel got too many notifications.
        case channelThrottled
        /// No `X-WNS-Status`, or one Herald does not know.
        case unknown(String)

        /// Reads an `X-WNS-Status` value.
        package init(_ header: String?) {
            switch header?.lowercased() {
            case "received": self = .received
            case "dropped": self = .dropped
            case "channelthrottled": self = .channelThrottled
            case let other?: self = .unknown(other)
            case nil: self = .unknown("")
            }
        }
    }

    /// `X-WNS-Status`.
    package var status: Status
    /// `X-WNS-Msg-ID`.
    package var messageID: String?
    /// `X-WNS-DeviceConnectionStatus` (`connected`, `disconnected`, `tempdisconnected`), when asked for.
    package var deviceConnectionStatus: String?

    package init(status: Status, messageID: String?, deviceConnectionStatus: String? = nil) {
        self.status = status
        self.messageID = messageID
        self.deviceConnectionStatus = deviceConnectionStatus
    }
}
