import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore
import ServiceLifecycle

import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder
import struct Foundation.UUID

/// Pushes: the recent ones, and a push's page that follows its delivery live (server-sent events).
extension DashboardController {
    /// How many pushes the list shows.
    static var recentPushes: Int { 50 }

    @Sendable func pushesPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let pushes = try await store.pushes.recent(applicationID: app.id, limit: Self.recentPushes)
            let view: [String: Any] = ["pushes": pushes.map { Self.pushView($0) }, "app": ["uuid": app.id.lowercasedString]]
            return pages.page("pushes", view, layout: try await layout(signed, title: "Push notifications", app: app))
        }
    }

    @Sendable func pushPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let (app, push) = try await self.push(signed, context)
            let reported = try await store.analytics.counts(pushID: push.id, applicationID: app.id)
            var view: [String: Any] = [
                "push": Self.pushView(push),
                "reported": [
                    "received": reported[AnalyticsEventType.received] ?? 0, "opened": reported[AnalyticsEventType.opened] ?? 0,
                    "geofence": reported[AnalyticsEventType.geofenceTriggered] ?? 0,
                ],
            ]
            if let accepted = try? push.accepted(),
                let unmatched = try await pushes.unmatchedTopics(accepted.push, applicationID: app.id), !unmatched.isEmpty
            {
                view["unmatchedTopics"] = Self.unmatchedTopicsText(unmatched)
            }
            view["analytics"] = try await analytics(app, pushID: push.id, request)
            return pages.page("push", view, layout: chartLayout(try await layout(signed, title: "Push", app: app)))
        }
    }

    /// `event: status` with the push's counters whenever they change, until it is done (or
    /// `liveLimit` passes); the counters are read every `livePoll`.
    @Sendable func pushEvents(_ request: Request, context: Context) async throws -> Response {
        guard let signed = try await signedIn(request) else { throw APIError.unauthorized("sign in first", scheme: "Cookie") }
        let (app, first) = try await push(signed, context)
        let (output, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(16))
        let store = self.store
        let poll = livePoll
        let limit = liveLimit
        let watch = Task {
            await withGracefulShutdownHandler {
                let clock = ContinuousClock()
                let deadline = clock.now.advanced(by: limit)
                var push = first
                var last = Self.statusJSON(push)
                continuation.yield(ByteBuffer(string: "event: status\ndata: \(last)\n\n"))
                while push.status != "done", clock.now < deadline, !Task.isCancelled {
                    try? await Task.sleep(for: poll)
                    guard let next = try? await store.pushes.find(id: push.id, applicationID: app.id) else { break }
                    push = next
                    let json = Self.statusJSON(push)
                    if json != last {
                        continuation.yield(ByteBuffer(string: "event: status\ndata: \(json)\n\n"))
                        last = json
                    }
                }
            } onGracefulShutdown: {
                continuation.finish()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in watch.cancel() }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: .init(asyncSequence: output))
    }

    // MARK: Helpers

    /// The application and the push named in the path, if the token may see them.
    func push(_ signed: SignedIn, _ context: Context) async throws -> (App, StoredPush) {
        let app = try await signed.scope.application(try Self.id(context, "app", "application"))
        guard let push = try await store.pushes.find(id: try Self.id(context, "push", "push"), applicationID: app.id) else {
            throw APIError.notFound("push")
        }
        return (app, push)
    }

    static func pushView(_ push: StoredPush) -> [String: Any] {
        // An older Herald's push that today's rules refuse still shows its text, read unchecked.
        let accepted = try? push.accepted()
        let body =
            accepted?.push.body
            ?? (try? AcceptedPush.request(stored: push.request))??["message"]?.objectValue?["body"]?.stringValue
            ?? accepted.flatMap { Self.silentPushText($0.push) }
        return [
            "id": push.id.lowercasedString, "app_uuid": push.applicationID.lowercasedString, "created": time(push.createdAt),
            "message": body ?? "", "status": push.status, "done": push.status == "done", "targeted": push.targeted,
            "delivered": push.delivered, "failed": push.failed, "invalid_tokens": push.invalidTokens, "expired": push.expired,
            "skipped": push.skipped, "pending": push.pending,
            "failures": push.failures.isEmpty
                ? "none" : push.failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "),
        ]
    }

    /// What a push without a message is: the geofence-update push Herald sends itself, or a silent push.
    static func silentPushText(_ push: Push) -> String {
        let key = GeofenceUpdatePush.key
        let ios = push.custom["ios"]?.objectValue?["extra"]?.objectValue?[key]
        if ios != nil || push.custom["android"]?.objectValue?[key] != nil {
            return "Geofence update (silent, sent by Herald): tells the devices to fetch their geofences again"
        }
        return "(silent push: no message)"
    }

    /// The counters the live page shows, as one line of JSON.
    static func statusJSON(_ push: StoredPush) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let status = LivePushStatus(
            status: push.status, targeted: push.targeted, delivered: push.delivered, failed: push.failed,
            invalidTokens: push.invalidTokens, expired: push.expired, skipped: push.skipped, pending: push.pending,
            failures: push.failures)
        return (try? encoder.encode(status)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// The counters a live push page shows (`event: status` data).
private struct LivePushStatus: Encodable {
    var status: String
    var targeted, delivered, failed, invalidTokens, expired, skipped, pending: Int
    var failures: [String: Int]

    enum CodingKeys: String, CodingKey {
        case status, targeted, delivered, failed
        case invalidTokens = "invalid_tokens"
        case expired, skipped, pending, failures
    }
}
