/// A kind of due work that a loop sleeps on until it is due: each kind has its own signal in a
/// process (`WorkSignals`) and its own payload on PostgreSQL's `herald_work` channel.
///
/// A new durable queue registers by declaring its kind here (a static with a name no other kind
/// has), announcing it after each commit that adds work (`WorkSignals.announce`), and running its
/// loop as `DeliveryService` does: read the kind's generation, look for due work, ask the store
/// for the earliest due time, then wait on the signal until then (`IdleWait`).
package struct WorkKind: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name: the notification payload's first part. Letters, digits and `_` only.
    package let name: String

    package init(_ name: String) {
        self.name = name
    }

    /// Push delivery jobs (`push_jobs`): fan-outs and batches, due now or later (retries,
    /// throttled batches, geofence-update pushes).
    package static let deliveryJobs = WorkKind("push_jobs")
    /// Schedule slots (`push_schedule_slots`) and recurring schedules' next occurrences
    /// (`push_schedules.next_at`): the scheduler sleeps until the earliest.
    package static let scheduledPushes = WorkKind("schedules")
    /// Webhook deliveries (`webhook_deliveries`): new events, and retries due later.
    package static let webhookEvents = WorkKind("webhooks")

    package var description: String { name }
}
