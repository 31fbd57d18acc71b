import Foundation
import HTTPTypes
import HeraldCore
import HeraldDelivery
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus
import Testing

/// `/healthz`, `/readyz`, `/metrics`, the request id and the request log line.
@Suite struct ObservabilityTests {
    // MARK: Health

    @Test func healthzAnswersWhileTheProcessRuns() async throws {
        try await ServerHarness.run(.sqlite) { _, client in
            let response = try await client.execute(uri: "/healthz", method: .get)
            #expect(response.status == .ok)
            #expect(try response.json()["status"] as? String == "ok")
        }
    }

    @Test(arguments: Backend.available)
    func readyzIsOKWhenTheDatabaseTheSchemaAndTheWorkersAre(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(observability: Observability(expectedWorkers: 4))) { world, client in
            // The workers start in their own task: poll until one runs.
            try await DeliveryWorld.poll("a worker runs") {
                try await client.execute(uri: "/readyz", method: .get).status == .ok
            }
            let json = try await client.execute(uri: "/readyz", method: .get).json()
            #expect(json["status"] as? String == "ok")
            #expect(json["checks"] as? [String: String] == ["database": "ok", "migrations": "ok", "workers": "ok"])
        }
    }

    @Test(arguments: Backend.available)
    func readyzIs503WhenNoDeliveryWorkerRuns(_ backend: Backend) async throws {
        // Four workers configured, none started.
        try await ServerHarness.run(backend, observability: Observability(expectedWorkers: 4)) { _, client in
            let response = try await client.execute(uri: "/readyz", method: .get)
            #expect(response.status == .serviceUnavailable)
            let json = try response.json()
            #expect(json["status"] as? String == "unavailable")
            #expect(json["failed"] as? [String] == ["workers"])
            #expect((json["checks"] as? [String: String])?["database"] == "ok")
        }
    }

    @Test(arguments: Backend.available)
    func readyzIs503WhenTheSchemaIsNotThisBuilds(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            try await harness.db.database.query(
                "INSERT INTO herald_migrations (version, name, applied_at) VALUES (9999, 'from a newer build', 0)")
            let response = try await client.execute(uri: "/readyz", method: .get)
            #expect(response.status == .serviceUnavailable)
            let json = try response.json()
            #expect(json["failed"] as? [String] == ["migrations"])
            let message = try #require((json["checks"] as? [String: String])?["migrations"])
            #expect(message.contains("9999"))
        }
    }

    @Test func readyzIs503WhenTheDatabaseDoesNotAnswer() async throws {
        // Nothing listens on port 1: the database check fails (or times out) without hanging the probe.
        let database = try PostgresStoreDatabase(
            url: "postgres://herald@127.0.0.1:1/herald", maximumConnections: 1, logger: TestDatabase.logger)
        let store = Store(
            database: database, secretBox: try SecretBox(keyBytes: Array(repeating: 7, count: 32)), logger: TestDatabase.logger)
        let app = Application(router: buildRouter(store: store), logger: TestDatabase.logger)
        do {
            try await app.test(.router) { client in
                let started = ContinuousClock.now
                let response = try await client.execute(uri: "/readyz", method: .get)
                #expect(response.status == .serviceUnavailable)
                let json = try response.json()
                #expect(json["failed"] as? [String] == ["database", "migrations"])
                #expect(ContinuousClock.now - started < .seconds(10))
                // Liveness does not depend on the database.
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            }
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()
    }

    // MARK: Metrics

    @Test(arguments: Backend.available)
    func metricsNeedTheRootAdminToken(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/metrics", method: .get, headers: bearer("not-a-token")).status == .unauthorized)
            let tenant = try #require(try await harness.store.tenants.create(name: "acme"))
            let (_, tenantToken) = try await harness.store.adminTokens.create(tenantID: tenant.id, name: "acme ops")
            #expect(try await client.execute(uri: "/metrics", method: .get, headers: bearer(tenantToken)).status == .forbidden)

            let response = try await client.execute(uri: "/metrics", method: .get, headers: bearer(harness.adminToken))
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = String(buffer: response.body)
            #expect(text.contains("# TYPE herald_queue_depth gauge"))
            #expect(text.contains("herald_delivery_workers_running 0"))
        }
    }

    @Test func metricsCanBePublic() async throws {
        let observability = Observability(ObservabilityConfiguration(metricsPublic: true))
        try await ServerHarness.run(.sqlite, observability: observability) { _, client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body).contains("herald_queue_depth"))
        }
    }

    @Test(arguments: Backend.available)
    func requestsAreCountedByRoutePatternAndStatus(_ backend: Backend) async throws {
        let observability = Observability()
        try await ServerHarness.run(backend, observability: observability) { harness, client in
            let receipt = UUID().uuidString.lowercased()
            for _ in 0..<2 {
                #expect(try await client.execute(uri: "/v1/push/\(receipt)", method: .get).status == .unauthorized)
            }
            #expect(try await client.execute(uri: "/no/such/route", method: .get).status == .notFound)
            _ = try await client.execute(uri: "/healthz", method: .get)

            let text = observability.registry.emitToString()
            #expect(!text.contains(receipt), "the raw path must not become a label")
            let pushStatus = try #require(
                text.split(separator: "\n").first { $0.hasPrefix("herald_http_requests_total{") && $0.contains(#"status="401""#) })
            #expect(pushStatus.contains(#"method="GET""#))
            #expect(pushStatus.contains(#"route="/v1/push/"#))
            #expect(pushStatus.hasSuffix(" 2"))
            #expect(observability.registry.value(#"herald_http_requests_total{method="GET",route="NotFound",status="404"}"#) == 1)
            #expect(observability.registry.value(#"herald_http_requests_total{method="GET",route="/healthz",status="200"}"#) == 1)
            #expect(text.contains("herald_http_request_duration_seconds_count"))
        }
    }

    @Test(arguments: Backend.available)
    func deliveredPushesMoveTheDeliveryCounters(_ backend: Backend) async throws {
        let observability = Observability()
        let registry = observability.registry
        try await DeliveryWorld.run(backend, .init(observability: observability)) { world, client in
            _ = [try await world.register(), try await world.register(), try await world.register()]
            let dead = try await world.register()
            world.mock.update { $0.unregistered[dead.registrationToken] = EpochClock.system.now.epochMilliseconds + 60_000 }

            let accepted = #"herald_pushes_accepted_total"#
            let sent = #"herald_notifications_sent_total{provider="apns"}"#
            let delivered = #"herald_notifications_delivered_total{provider="apns"}"#
            let gone = #"herald_notifications_failed_total{provider="apns",reason="DeviceGone"}"#
            let before = [accepted, sent, delivered, gone].map { registry.value($0) }
            #expect(before == [0, 0, 0, 0])

            let receipt = try await world.send(#"{"message":{"body":"Counted"},"target":{"platforms":["ios"]}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 3)

            #expect(registry.value(accepted) == 1)
            #expect(registry.value(sent) == 4)
            #expect(registry.value(delivered) == 3)
            #expect(registry.value(gone) == 1)
            #expect(registry.value(#"herald_provider_latency_seconds_count{provider="apns"}"#) >= 1)
            #expect(registry.value(#"herald_provider_requests_in_flight{provider="apns"}"#) == 0)

            // The scrape reads the state gauges: the APNs connection the batch used is open.
            let root = try await world.db.store.adminTokens.create(tenantID: nil, name: "root").1
            let scrape = try await client.execute(uri: "/metrics", method: .get, headers: bearer(root))
            let text = String(buffer: scrape.body)
            #expect(PrometheusCollectorRegistry.value(#"herald_provider_connections{provider="apns"}"#, in: text) >= 1)
            #expect(PrometheusCollectorRegistry.value("herald_queue_depth", in: text) == 0)
            #expect(PrometheusCollectorRegistry.value("herald_delivery_workers_running", in: text) == 4)
        }
    }

    @Test func schedulerLatenessIsAHistogramInSeconds() {
        let observability = Observability()
        observability.delivery.metrics.schedulerLateness(.milliseconds(1500))
        observability.delivery.metrics.schedulerLateness(.milliseconds(-20))
        let registry = observability.registry
        #expect(registry.value("herald_scheduler_lateness_seconds_count") == 2)
        #expect(registry.value(#"herald_scheduler_lateness_seconds_bucket{le="1.0"}"#) == 1)
        #expect(registry.value(#"herald_scheduler_lateness_seconds_bucket{le="2.0"}"#) == 2)
    }

    // MARK: Request id

    @Test func aSaneRequestIDIsEchoedAndAnyOtherReplaced() async throws {
        try await ServerHarness.run(.sqlite) { _, client in
            let echoed = try await client.execute(uri: "/healthz", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "abc-123_x.y"])
            #expect(echoed.headers[HTTPField.Name("X-Request-Id")!] == "abc-123_x.y")

            let generated = try await client.execute(uri: "/healthz", method: .get)
            let id = try #require(generated.headers[HTTPField.Name("X-Request-Id")!])
            #expect(id.count >= 16)
            let another = try await client.execute(uri: "/healthz", method: .get)
            #expect(another.headers[HTTPField.Name("X-Request-Id")!] != id)

            for insane in [String(repeating: "a", count: 129), "has space", "semi;colon", "quote\"d"] {
                let response = try await client.execute(uri: "/healthz", method: .get, headers: [HTTPField.Name("X-Request-Id")!: insane])
                let answered = try #require(response.headers[HTTPField.Name("X-Request-Id")!])
                #expect(answered != insane)
                #expect(answered.count <= 128)
            }

            // Error answers carry it too.
            let failed = try await client.execute(uri: "/v1/push", method: .post, headers: [HTTPField.Name("X-Request-Id")!: "failing-1"])
            #expect(failed.status == .unauthorized)
            #expect(failed.headers[HTTPField.Name("X-Request-Id")!] == "failing-1")
        }
    }

    @Test func eachRequestLogsOneLineWithItsIDRouteStatusAndDuration() async throws {
        let logs = CapturedLogs()
        try await ServerHarness.run(.sqlite, logger: logs.logger(level: .info)) { _, client in
            _ = try await client.execute(uri: "/v1/push/\(UUID())", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "trace-me-42"])
        }
        let lines = logs.all.filter { $0.contains("request_id=trace-me-42") }
        #expect(lines.count == 1, "\(logs.all)")
        let line = try #require(lines.first)
        #expect(line.hasPrefix("info"))
        #expect(line.contains("method=GET"))
        #expect(line.contains("route=/v1/push/"))
        #expect(line.contains("status=401"))
        #expect(line.contains("duration_ms="))
    }
}
