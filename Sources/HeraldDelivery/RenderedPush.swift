import HeraldCore

/// One push rendered for each kind of device a batch holds, once per batch.
///
/// A stored push was rendered for every provider when it was accepted (`AcceptedPush.check`; an
/// older Herald's push is checked again as it is read), so rendering it here does not fail for
/// what it says; a failure is a stored push Herald cannot deliver, and the caller fails the batch.
struct RenderedPush: Sendable {
    var apns: APNsNotification?
    /// The FCM message of a platform that sends data messages (the default), and of one with
    /// `fcm_notification` (a notification block besides).
    var fcm: FCMMessage?
    var fcmWithNotification: FCMMessage?
    var webPush: WebPushNotification?
    var wns: WNSNotification?

    /// Renders the payloads for the platform types present.
    init(_ push: Push, receiptID: String?, types: Set<PlatformType>, now: Int64) throws(ValidationError) {
        for type in types {
            switch type {
            case .ios: apns = try APNsRenderer.render(push, receiptID: receiptID)
            case .android:
                fcm = try FCMRenderer.render(push, receiptID: receiptID, now: now)
                fcmWithNotification = try FCMRenderer.render(push, receiptID: receiptID, now: now, notificationByDefault: true)
            case .web: webPush = try WebPushRenderer.render(push, receiptID: receiptID, now: now)
            case .windows: wns = try WNSRenderer.render(push, receiptID: receiptID, now: now)
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
