import Foundation
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus

/// A Herald router on a fresh database with a given `Observability` (its own registry), for the
/// observability tests.
enum ObservedServer {
    static func run(
        _ backend: Backend, _ observability: Observability = Observability(), setup: TestingSetup = .router,
        logger: Logger = TestDatabase.logger,
        _ body: @Sendable @escaping (ServerHarness, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await withTestDatabase(backend) { db async throws in
            _ = try await db.store.tenants.create(name: Bootstrap.defaultTenantName)
            let (_, token) = try await db.store.adminTokens.create(tenantID: nil, name: "root")
            let harness = ServerHarness(db: db, adminToken: token)
            let app = Application(
                router: buildRouter(store: db.store, observability: observability),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            try await app.test(setup) { client in
                try await body(harness, client)
            }
        }
    }
}

extension PrometheusCollectorRegistry {
    /// The value of the sample `series` (`name{label="value",…}` exactly as exposed), 0 when absent.
    func value(_ series: String) -> Double {
        Self.value(series, in: emitToString())
    }

    /// The value of `series` in a Prometheus text exposition, 0 when absent.
    static func value(_ series: String, in exposition: String) -> Double {
        for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1)) ?? .nan
        }
        return 0
    }
}
