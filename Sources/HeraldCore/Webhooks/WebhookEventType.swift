/// The events an app's webhook endpoint can ask for (docs/WEBHOOKS.md).
package enum WebhookEventType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A push has an outcome for every targeted device: its final counters and failures by reason.
    case pushDone = "push.done"
    /// Delivery deactivated a device because its provider said the token is dead.
    case deviceDeactivated = "device.deactivated"
    /// A provider refused a platform's credentials: its sends are paused.
    case platformFailing = "platform.failing"
    /// A failing platform was given new credentials: its sends resume.
    case platformRecovered = "platform.recovered"
}
