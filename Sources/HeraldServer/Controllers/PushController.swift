import HeraldCore
import HeraldDelivery
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.Data
import class Foundation.JSONDecoder
import struct Foundation.UUID

/// `POST /v1/push` and `GET /v1/push/:receipt_id`, with app credentials.
struct PushController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let clock: EpochClock
    /// Counts accepted pushes and tells the app's activity log.
    var telemetry = DeliveryTelemetry()
    /// Pushes for later become schedules (`schedule_id`).
    let scheduling: PushScheduling

    func addRoutes(to router: Router<Context>) {
        router.post("v1/push", use: push)
        router.get("v1/push/:receipt_id", use: status)
    }

    struct Accepted: ResponseEncodable {
        var receiptID: String
        /// The targeted topics that reach no device (none subscribed, expired, or never created);
        /// only when the push targets topics.
        var unmatchedTopics: [String]? = nil

        enum CodingKeys: String, CodingKey {
            case receiptID = "receipt_id"
            case unmatchedTopics = "unmatched_topics"
        }
    }

    struct ScheduleAccepted: ResponseEncodable {
        var scheduleID: String

        enum CodingKeys: String, CodingKey {
            case scheduleID = "schedule_id"
        }
    }

    struct Validated: ResponseEncodable {
        var valid: Bool
        var targets: String
        /// The active devices the push would reach if sent now (Herald's addition), counted by
        /// the store with the fan-out's rules: the dashboard's preview of an audience.
        var audienceCount: Int

        enum CodingKeys: String, CodingKey {
            case valid, targets
            case audienceCount = "audience_count"
        }
    }

    @Sendable func push(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let app = try await auth.application(request)
        let input = try await request.decodeJSON(PushInput.self)
        let body = try await request.body.collect(upTo: Limits.requestBodyBytes)
        switch try await accept(input, body: String(buffer: body), for: app) {
        case .validated(let validated): return try validated.response(from: request, context: context)
        case .scheduled(let scheduled): return try scheduled.response(from: request, context: context)
        case .accepted(let accepted): return try accepted.response(from: request, context: context)
        }
    }

    /// What came of a push request.
    enum Outcome: Sendable {
        /// `validate_only`: checked, nothing stored.
        case validated(Validated)
        /// For later: a schedule.
        case scheduled(ScheduleAccepted)
        /// Queued now.
        case accepted(Accepted)
    }

    /// Validates `input` once (`AcceptedPush.check`) and stores the validated push, or its
    /// schedule (which also keeps `body`, the JSON text, to show and change), for `app`: what
    /// `POST /v1/push` and the dashboard's pushes both do.
    func accept(_ input: PushInput, body: String, for app: App) async throws -> Outcome {
        let time = clock.now.epochMilliseconds
        let push = try AcceptedPush.check(input, now: time)
        if push.validateOnly {
            let audience: String
            switch push.audience {
            case .devices(let ids): audience = "\(ids.count) devices"
            case .selection: audience = "selection"
            }
            let count = try await store.pushes.audienceCount(of: push, applicationID: app.id)
            return .validated(Validated(valid: true, targets: audience, audienceCount: count))
        }
        if let schedule = try await scheduling.schedule(push, request: body, applicationID: app.id, now: time) {
            return .scheduled(ScheduleAccepted(scheduleID: schedule.id))
        }
        let id = try await store.pushes.create(applicationID: app.id, AcceptedPush(push))
        telemetry.pushAccepted(id, applicationID: app.id, scheduledAt: nil, time: clock.now.epochMilliseconds)
        var accepted = Accepted(receiptID: id.lowercasedString)
        accepted.unmatchedTopics = try await unmatchedTopics(push, applicationID: app.id)
        return .accepted(accepted)
    }

    struct Status: ResponseEncodable {
        var receiptID: String
        var status: String
        var createdAt: Int64
        var targeted: Int
        var delivered: Int
        var failed: Int
        var failures: [String: Int]
        var invalidTokens: Int
        var expired: Int
        var skipped: Int
        var pending: Int
        /// Of the pending devices, those held until their quiet time ends (`"quiet_time": "hold"`),
        /// by due time; only for a push that holds some.
        var quietTimeHeld: [Held]?
        /// The latest reason a provider could not be reached for the push's devices (TLS, DNS, a
        /// refused connection, the proxy); only when there was one.
        var lastError: LastError?
        /// Device reports (`POST /v1/analytics`) carrying this receipt.
        var received: Int
        var opened: Int
        var geofenceTriggers: Int

        enum CodingKeys: String, CodingKey {
            case receiptID = "receipt_id"
            case status
            case createdAt = "created_at"
            case targeted, delivered, failed, failures
            case invalidTokens = "invalid_tokens"
            case expired, skipped, pending
            case quietTimeHeld = "quiet_time_held"
            case lastError = "last_error"
            case received, opened
            case geofenceTriggers = "geofence_triggers"
        }

        /// Why a provider could not be reached, and when (epoch ms).
        struct LastError: Encodable {
            var reason: String
            var at: Int64
        }

        /// Devices sent when their quiet time ends, at `dueAt` (epoch ms).
        struct Held: Encodable {
            var dueAt: Int64
            var devices: Int

            enum CodingKeys: String, CodingKey {
                case dueAt = "due_at"
                case devices
            }
        }
    }

    @Sendable func status(_ request: Request, context: Context) async throws -> Status {
        let app = try await auth.application(request)
        guard let raw = context.parameters.get("receipt_id"), let id = UUID(text: raw),
            let push = try await store.pushes.find(id: id, applicationID: app.id)
        else {
            throw APIError.notFound("push")
        }
        let reported = try await store.analytics.counts(pushID: push.id, applicationID: app.id)
        // Only a push that can hold devices looks for held batches.
        var held: [Status.Held]?
        if push.status != "done", (try? push.accepted().push.quietTime) == .hold {
            held = try await store.pushes.quietTimeHolds(pushID: push.id).map { Status.Held(dueAt: $0.dueAt, devices: $0.devices) }
        }
        return Status(
            receiptID: push.id.lowercasedString, status: push.status, createdAt: push.createdAt,
            targeted: push.targeted, delivered: push.delivered, failed: push.failed, failures: push.failures,
            invalidTokens: push.invalidTokens, expired: push.expired, skipped: push.skipped, pending: push.pending,
            quietTimeHeld: held,
            lastError: push.lastError.map { Status.LastError(reason: $0, at: push.lastErrorAt ?? push.createdAt) },
            received: reported[AnalyticsEventType.received] ?? 0, opened: reported[AnalyticsEventType.opened] ?? 0,
            geofenceTriggers: reported[AnalyticsEventType.geofenceTriggered] ?? 0)
    }
}
