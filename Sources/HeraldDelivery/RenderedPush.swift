import HeraldCore

/// One push rendered for each kind of device a batch holds, once per batch.
struct RenderedPush: Sendable {
    var apns: APNsNotification?
    /// The FCM message of a platform that sends data messages (the default), and of one with
    /// `fcm_notification` (a notification block besides).
    var fcm: FCMMessage?
    var fcmWithNotification: FCMMessage?
    var webPush: WebPushNotification?
    var wns: WNSNotification?
    /// Kinds of device the push cannot be rendered for (it was accepted under older rules, say).
    var problems: [PlatformType: ValidationError] = [:]

    /// Renders the payloads for the platform types present.
    init(_ push: Push, receiptID: String?, types: Set<PlatformType>, now: Int64) {
        for type in types {
            do throws(ValidationError) {
                switch type {
                case .ios: apns = try APNsRenderer.render(push, receiptID: receiptID)
                case .android:
                    fcm = try FCMRenderer.render(push, receiptID: receiptID, now: now)
                    fcmWithNotification = try FCMRenderer.render(push, receiptID: receiptID, now: now, notificationByDefault: true)
                case .web: webPush = try WebPushRenderer.render(push, receiptID: receiptID, now: now)
                case .windows: wns = try WNSRenderer.render(push, receiptID: receiptID, now: now)
                }
            } catch {
                problems[type] = error
            }
        }
    }

    /// Whether there is something to send to a device of `type`.
    func hasContent(for type: PlatformType) -> Bool {
        switch type {
        case .ios: apns != nil
        case .android: fcm != nil
        case .web: webPush != nil
        case .windows: wns != nil
        }
    }
}
