import HTTPTypes
import HeraldCore
import HeraldDelivery
import HeraldStore
import Hummingbird
import NIOCore
import ServiceLifecycle

import class Foundation.JSONEncoder
import struct Foundation.UUID

/// An application's live activity log, for admin tokens that may see the application:
/// `GET /admin/v1/apps/:app/logs` (the recent events as text) and
/// `GET /admin/v1/apps/:app/logs/stream` (server-sent events from now on).
struct ActivityLogController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let activity: ActivityLog
    /// A comment line is sent this often so that proxies keep the stream open and a gone client is noticed.
    let heartbeat: Duration

    func addRoutes(to router: Router<Context>) {
        let admin = router.group("admin/v1")
        admin.get("apps/:app/logs", use: download)
        admin.get("apps/:app/logs/stream", use: stream)
    }

    @Sendable func download(_ request: Request, context: Context) async throws -> Response {
        Self.download(try await application(request, context), activity: activity)
    }

    /// The application's recent events as a text file to save.
    static func download(_ app: App, activity: ActivityLog) -> Response {
        let text = activity.recent(app.id).map { $0.line + "\n" }.joined()
        let name = "herald-\(app.id.lowercasedString)-activity.log"
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/plain; charset=utf-8", .contentDisposition: "attachment; filename=\"\(name)\"",
                .cacheControl: "no-store",
            ],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    @Sendable func stream(_ request: Request, context: Context) async throws -> Response {
        Self.stream(try await application(request, context), activity: activity, heartbeat: heartbeat)
    }

    /// Server-sent events of the application's activity from now on, with a comment every `heartbeat`.
    static func stream(_ app: App, activity: ActivityLog, heartbeat: Duration) -> Response {
        let events = activity.subscribe(app.id)
        let (output, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(512))
        // A first comment: the subscription is in place once the client reads it.
        continuation.yield(ByteBuffer(string: ": subscribed to \(app.id.lowercasedString)\n\n"))
        let forward = Task {
            await withGracefulShutdownHandler {
                for await event in events {
                    continuation.yield(Self.frame(event))
                }
            } onGracefulShutdown: {
                continuation.finish()
            }
            continuation.finish()
        }
        let beat = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
            }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            beat.cancel()
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: .init(asyncSequence: output))
    }

    /// `event: <kind>` and `data: <json>`, one event.
    static func frame(_ event: ActivityEvent) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ByteBuffer(string: "event: \(event.kind.rawValue)\ndata: \(json)\n\n")
    }

    /// The application, if the request's admin token may see it; not found otherwise.
    private func application(_ request: Request, _ context: Context) async throws -> App {
        try await AdminScope.application(request, context, auth: auth, store: store)
    }
}
