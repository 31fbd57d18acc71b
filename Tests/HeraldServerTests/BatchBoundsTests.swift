import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

@testable import HeraldDelivery

/// What a fault costs in requests: a refused credential stops the batch (issue 31, defect 2),
/// and a worker that dies mid-batch leaves at most one round of sent devices to be sent again
/// (defect 7). Through the engine to the mock APNs over TLS.
@Suite struct BatchBoundsTests {
    /// 403 `InvalidProviderToken` for every request of a 200-device batch: the first refusal
    /// stops the batch (a probe round of `DeliveryRules.probe` devices), the one more try the
    /// token rules allow is a probe round again, and then the platform pauses. Before, the
    /// whole batch was sent on each try (400 requests).
    @Test(arguments: Backend.available)
    func refusedCredentialsStopTheBatchAtTheFirstRefusal(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 1)) { world, client in
            for _ in 0..<200 { _ = try await world.register() }
            world.mock.update { $0.signingKeys[DeliveryWorld.keyID] = P256.Signing.PrivateKey().publicKey }
            let receipt = try await world.send(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#, client)
            let platformID = world.fixture.platform.id
            try await DeliveryWorld.poll("the platform's credentials are failing") {
                try await world.db.store.platforms.find(id: platformID)?.credentialsStatus == .failing
            }
            let probe = DeliveryRules().probe
            #expect(world.mock.statistics.requests <= 2 * probe)
            let status = try await world.status(receipt, client)
            #expect(status["pending"] as? Int == 200)
            #expect(status["failed"] as? Int == 0)
        }
    }

    /// A worker frozen (or killed) mid-batch: its job keeps only the devices not yet recorded,
    /// so the worker that takes it over after the lease resends at most one round
    /// (`progressEvery`) of devices the provider already had. Before, the job kept the whole
    /// batch, every device already sent included.
    @Test(arguments: Backend.available)
    func aWorkerDyingMidBatchLeavesAtMostOneRoundToResend(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(workers: 0)) { world, client in
            var tokens: [Int64: String] = [:]
            for _ in 0..<100 {
                let device = try await world.register()
                tokens[device.id] = device.registrationToken
            }
            world.mock.update { $0.responseDelay = .milliseconds(300) }
            var configuration = world.configuration
            configuration.workers = 1
            configuration.batchSize = 100
            configuration.progressEvery = 20
            _ = try await world.send(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#, client)
            let service = DeliveryService(store: world.db.store, configuration: configuration, logger: TestDatabase.logger)
            let worker = Task { try await service.run() }
            defer { worker.cancel() }
            // Past the probe (50) and one round (20): a round is in flight, its answers held.
            try await DeliveryWorld.poll("a later round is in flight") { world.mock.statistics.requests > 70 }
            // What a worker taking the job over now would send: the claimed batch's devices.
            let rows = try await world.db.store.database.query(
                "SELECT device_ids FROM push_jobs WHERE kind = 'batch' AND state = 'claimed'")
            let held = try rows.flatMap { try $0.string("device_ids").split(separator: ",").compactMap { Int64($0) } }
            #expect(!held.isEmpty)
            let sent = Set(world.mock.received.map(\.deviceToken))
            let resent = held.filter { tokens[$0].map(sent.contains) ?? false }
            #expect(resent.count <= configuration.progressEvery, "\(resent.count) devices the mock already had would be sent again")
        }
    }
}
