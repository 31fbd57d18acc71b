import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.Data
import class Foundation.JSONEncoder

/// `GET /healthz` (the process answers) and `GET /readyz` (it can do its work: the database
/// answers, its schema is this build's, the delivery workers run). No authentication: they say
/// nothing but which check failed.
struct HealthController<Context: RequestContext>: Sendable {
    let store: Store
    let observability: Observability
    /// How long the database may take to answer `SELECT 1`.
    var databaseTimeout: Duration = .seconds(2)

    func addRoutes(to router: Router<Context>) {
        router.get("healthz", use: health)
        router.get("readyz", use: ready)
    }

    struct Status: Encodable {
        var status: String
        /// Each check: `ok` or what is wrong.
        var checks: [String: String]?
        /// The checks that failed.
        var failed: [String]?
        /// Providers this process could not connect to at its last try, with the cause's name
        /// (`tls_untrusted`, `dns`, `refused`, `proxy`, …); absent while every provider is reachable. Reported,
        /// not a failed check: a provider's outage does not make this process unable to work,
        /// and the devices wait for it (see docs/OBSERVABILITY.md).
        var providers: [String: String]?
    }

    @Sendable func health(_ request: Request, context: Context) async throws -> Response {
        try json(.ok, Status(status: "ok"))
    }

    @Sendable func ready(_ request: Request, context: Context) async throws -> Response {
        var checks: [String: String] = [:]
        checks["database"] = await checkDatabase(context)
        if checks["database"] == "ok" {
            checks["migrations"] = await checkMigrations()
        } else {
            checks["migrations"] = "not checked: the database does not answer"
        }
        let workers = observability.delivery.workers
        checks["workers"] =
            workers.isReady
            ? "ok" : "no delivery worker is running (\(workers.expected) configured)"
        let failed = checks.filter { $0.value != "ok" }.keys.sorted()
        var providers: [String: String] = [:]
        for (provider, error) in observability.delivery.connections.unreachable where providers[provider] == nil {
            // The cause's name only: the unauthenticated answer says what failed, not where.
            providers[provider] = "unreachable: \(error.cause)"
        }
        let unreachable = providers.isEmpty ? nil : providers
        if failed.isEmpty {
            return try json(.ok, Status(status: "ok", checks: checks, providers: unreachable))
        }
        context.logger.warning("not ready", metadata: ["failed": "\(failed.joined(separator: ","))"])
        return try json(.serviceUnavailable, Status(status: "unavailable", checks: checks, failed: failed, providers: unreachable))
    }

    /// `SELECT 1`, given up after `databaseTimeout` (the query is left to its own cancellation,
    /// so that a hung connection cannot hang the probe).
    private func checkDatabase(_ context: Context) async -> String {
        let database = store.database
        let timeout = databaseTimeout
        let logger = context.logger
        let (answers, continuation) = AsyncStream.makeStream(of: String.self)
        let query = Task {
            do {
                _ = try await database.query("SELECT 1 AS one")
                continuation.yield("ok")
            } catch {
                logger.warning("readiness: the database does not answer", metadata: ["error": "\(error)"])
                continuation.yield("the database does not answer")
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            continuation.yield("the database did not answer within \(timeout)")
        }
        var iterator = answers.makeAsyncIterator()
        let first = await iterator.next() ?? "the database check was cancelled"
        query.cancel()
        timer.cancel()
        continuation.finish()
        return first
    }

    private func checkMigrations() async -> String {
        do {
            let applied = try await store.migrator.appliedVersions().max() ?? 0
            let latest = store.migrator.migrations.map(\.version).max() ?? 0
            return applied == latest ? "ok" : "the schema is at version \(applied), this build's is \(latest): run herald migrate"
        } catch {
            return "cannot read the schema version"
        }
    }

    private func json(_ status: HTTPResponse.Status, _ body: Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(body)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
