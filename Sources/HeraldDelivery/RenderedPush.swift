import HeraldCore
import HeraldStore

/// One push rendered for each kind of device a batch holds, once per batch.
///
/// A stored push was rendered for every provider when it was accepted (`AcceptedPush.check`; an
/// older Herald's push is checked again as it is read), so rendering it here does not fail for
/// what it says; a failure is a stored push Herald cannot deliver, and the caller fails the batch.
///
/// A push with a relative badge (`"+1"`) shows each iOS device its own number: its APNs
/// notification is rendered once per number the batch's devices show (`badged`), not once per
/// device. Every other push takes none of that path.
struct RenderedPush: Sendable {
    var apns: APNsNotification?
    /// The FCM message of a platform that sends data messages (the default), and of one with
    /// `fcm_notification` (a notification block besides).
    var fcm: FCMMessage?
    var fcmWithNotification: FCMMessage?
    var webPush: WebPushNotification?
    var wns: WNSNotification?
    /// For a push with a relative badge: the iOS devices' numbers and a notification per number.
    var badged: BadgedAPNs?

    /// The APNs notifications of a push with a relative badge.
    struct BadgedAPNs: Sendable {
        /// Device id → the number it shows (`PushRepository.badges`).
        var numbers: [Int64: Int64]
        /// Number → the notification showing it.
        var notifications: [Int64: APNsNotification]

        /// The notification for the device `id`; nil when it has no number (it no longer exists).
        func notification(for id: Int64) -> APNsNotification? {
            numbers[id].flatMap { notifications[$0] }
        }
    }

    /// Renders the payloads for the platform types present; `badges` (device id → number) for a
    /// push with a relative badge.
    init(_ push: Push, receiptID: String?, types: Set<PlatformType>, now: Int64, badges: [Int64: Int64]? = nil) throws(ValidationError) {
        for type in types {
            switch type {
            case .ios:
                apns = try APNsRenderer.render(push, receiptID: receiptID)
                if let badges {
                    var notifications: [Int64: APNsNotification] = [:]
                    for number in Set(badges.values) {
                        notifications[number] = try APNsRenderer.render(push, receiptID: receiptID, badge: number)
                    }
                    badged = BadgedAPNs(numbers: badges, notifications: notifications)
                }
            case .android:
                fcm = try FCMRenderer.render(push, receiptID: receiptID, now: now)
                fcmWithNotification = try FCMRenderer.render(push, receiptID: receiptID, now: now, notificationByDefault: true)
            case .web: webPush = try WebPushRenderer.render(push, receiptID: receiptID, now: now)
            case .windows: wns = try WNSRenderer.render(push, receiptID: receiptID, now: now)
            }
        }
    }

    private init() {}

    /// The push as devices in their quiet time get it (`"quiet_time": "silent"`): `Push.silenced`
    /// rendered, Web Push at `Urgency: very-low` and WNS toasts without their popup. A kind of
    /// device the push has nothing quiet for (an Android push that is only a notification block)
    /// gets nothing, and is counted skipped.
    static func silenced(
        _ push: Push, receiptID: String?, types: Set<PlatformType>, now: Int64, badges: [Int64: Int64]? = nil
    ) -> RenderedPush {
        var rendered = RenderedPush()
        let quiet = push.silenced
        for type in types {
            guard let one = try? RenderedPush(quiet, receiptID: receiptID, types: [type], now: now, badges: badges) else { continue }
            switch type {
            case .ios:
                rendered.apns = one.apns
                rendered.badged = one.badged
            case .android:
                rendered.fcm = one.fcm
                rendered.fcmWithNotification = one.fcmWithNotification
            case .web: rendered.webPush = one.webPush?.silenced
            case .windows: rendered.wns = one.wns?.silenced
            }
        }
        return rendered
    }

    /// Whether there is something to send to the device `target`.
    func hasContent(for target: DeliveryTarget) -> Bool {
        switch target.platformType {
        case .ios: if let badged { badged.notification(for: target.id) != nil } else { apns != nil }
        case .android: fcm != nil
        case .web: webPush != nil
        case .windows: wns != nil
        }
    }
}
