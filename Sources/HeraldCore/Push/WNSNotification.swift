/// One push rendered for Windows Push Notification Services: the body POSTed to a channel URI
/// and the `X-WNS-*` header values that go with it.
package struct WNSNotification: Sendable, Equatable {
    /// `X-WNS-Type`: what the notification is, which decides its `Content-Type`.
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        /// A toast: a popup and an entry in the action center (XML with a `<toast>` root).
        case toast = "wns/toast"
        /// A tile update (XML with a `<tile>` root).
        case tile = "wns/tile"
        /// A badge on the tile (XML with a `<badge>` root).
        case badge = "wns/badge"
        /// Bytes for the app itself, shown to nobody.
        case raw = "wns/raw"

        /// `text/xml` for toasts, tiles and badges; `application/octet-stream` for raw.
        package var contentType: String {
            switch self {
            case .toast, .tile, .badge: "text/xml"
            case .raw: "application/octet-stream"
            }
        }

        /// The XML root element a payload of this kind has; nil for raw.
        package var rootElement: String? {
            switch self {
            case .toast: "toast"
            case .tile: "tile"
            case .badge: "badge"
            case .raw: nil
            }
        }
    }

    /// `X-WNS-Cache-Policy`: whether WNS keeps the notification for a device that is offline.
    package enum CachePolicy: String, Sendable, Equatable, CaseIterable {
        /// Keep it for the device while it is offline.
        case cache
        /// Drop it if the device is offline.
        case noCache = "no-cache"
    }

    /// `X-WNS-Type`.
    package var kind: Kind
    /// The body: XML for toasts, tiles and badges, anything for raw.
    package var payload: [UInt8]
    /// `X-WNS-TTL`: seconds WNS keeps the notification; nil leaves it to WNS.
    package var ttl: Int64?
    /// `X-WNS-Tag`: a newer notification with the same tag (and group) replaces this one.
    package var tag: String?
    /// `X-WNS-Group`: the group of a toast, for replacing or removing it with others.
    package var group: String?
    /// `X-WNS-Cache-Policy`; nil leaves it to WNS.
    package var cachePolicy: CachePolicy?
    /// `X-WNS-SuppressPopup: true`: the toast goes to the action center without a popup.
    package var suppressPopup: Bool

    package init(
        kind: Kind, payload: [UInt8], ttl: Int64? = nil, tag: String? = nil, group: String? = nil, cachePolicy: CachePolicy? = nil,
        suppressPopup: Bool = false
    ) {
        self.kind = kind
        self.payload = payload
        self.ttl = ttl
        self.tag = tag
        self.group = group
        self.cachePolicy = cachePolicy
        self.suppressPopup = suppressPopup
    }

    /// The `Content-Type` of the body.
    package var contentType: String { kind.contentType }

    /// The payload as text, for logs and tests.
    package var payloadText: String { String(decoding: payload, as: UTF8.self) }
}
