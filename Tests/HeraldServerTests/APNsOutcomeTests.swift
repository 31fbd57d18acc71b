import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

@testable import HeraldDelivery

/// Each APNs answer the issue lists, through the engine to the mock over TLS, and what Herald
/// does about it. (200, 410 `Unregistered`, 429 and 503 are in `PushDeliveryTests`.)
@Suite struct APNsOutcomeTests {
    /// 400 `BadDeviceToken` and `DeviceTokenNotForTopic` deactivate the device; another 400
    /// (`BadTopic`) and 413 fail that device for good, without a retry, and keep it; a 500 is
    /// retried and then delivered.
    @Test(arguments: Backend.available)
    func rejectionsAreCountedRetriedOrDeactivatedAsAppleDocuments(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let live = try await world.register()
            let badToken = try await world.register()
            let notForTopic = try await world.register()
            let badTopic = try await world.register()
            let tooLarge = try await world.register()
            let internalError = try await world.register()
            world.mock.update {
                $0.rejected = [
                    badToken.registrationToken: .init(status: 400, reason: "BadDeviceToken"),
                    notForTopic.registrationToken: .init(status: 400, reason: "DeviceTokenNotForTopic"),
                    badTopic.registrationToken: .init(status: 400, reason: "BadTopic"),
                    tooLarge.registrationToken: .init(status: 413, reason: "PayloadTooLarge"),
                    internalError.registrationToken: .init(status: 500, reason: "InternalServerError", times: 1),
                ]
            }
            let receipt = try await world.send(#"{"message":{"body":"outcomes"},"target":{"platform":"ios"}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["targeted"] as? Int == 6)
            #expect(status["delivered"] as? Int == 2)
            #expect(status["invalid_tokens"] as? Int == 2)
            #expect(status["failed"] as? Int == 2)
            #expect((status["failures"] as? [String: Int]) == ["BadTopic": 1, "PayloadTooLarge": 1])
            #expect(status["pending"] as? Int == 0)
            #expect(Set(world.mock.received.map(\.deviceToken)) == [live.registrationToken, internalError.registrationToken])
            // The 500 was asked again; the permanent refusals were not (the mock's counter).
            #expect(world.mock.statistics.requests == 7)

            for (device, active) in [(badToken, false), (notForTopic, false), (badTopic, true), (tooLarge, true), (live, true)] {
                let stored = try #require(try await world.db.store.devices.find(platformID: world.fixture.platform.id, uuid: device.uuid))
                #expect(stored.active == active, "\(device.registrationToken)")
            }
        }
    }

    /// A 500 on every try is retried up to the last attempt, then counted as failed.
    @Test(arguments: Backend.available)
    func serverErrorsAreRetriedThenRecorded(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(maximumAttempts: 2)) { world, client in
            let device = try await world.register()
            world.mock.update { $0.rejected[device.registrationToken] = .init(status: 500, reason: "InternalServerError") }
            let receipt = try await world.send(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect((status["failures"] as? [String: Int]) == ["InternalServerError": 1])
            #expect(world.mock.statistics.requests == 2)
            let stored = try #require(try await world.db.store.devices.find(platformID: world.fixture.platform.id, uuid: device.uuid))
            #expect(stored.active)
        }
    }

    /// 410 with a timestamp deactivates the device — unless it registered again after that
    /// time (the app was reinstalled and the token is live again).
    @Test(arguments: Backend.available)
    func goneDeactivatesUnlessRegisteredAgainAfterAppleSaysItDied(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let diedLater = try await world.register()
            let registeredSince = try await world.register()
            world.mock.update {
                $0.unregistered[diedLater.registrationToken] = diedLater.updatedAt + 60_000
                $0.unregistered[registeredSince.registrationToken] = registeredSince.updatedAt - 60_000
            }
            let receipt = try await world.send(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["invalid_tokens"] as? Int == 2)
            let platformID = world.fixture.platform.id
            #expect(try await world.db.store.devices.find(platformID: platformID, uuid: diedLater.uuid)?.active == false)
            #expect(try await world.db.store.devices.find(platformID: platformID, uuid: registeredSince.uuid)?.active == true)
        }
    }

    /// 403 `InvalidProviderToken` twice (the token is refused, and again after the one refresh
    /// the rules allow): the platform's credentials are marked failing — visible in the admin
    /// API — its sends pause, and its devices are kept, the push waiting for new credentials.
    @Test(arguments: Backend.available)
    func refusedCredentialsPauseThePlatformAndKeepItsDevices(_ backend: Backend) async throws {
        // One batch, so that the tries are one after the other.
        try await DeliveryWorld.run(backend, .init(batchSize: 10)) { world, client in
            let devices = [try await world.register(), try await world.register(), try await world.register()]
            // The mock now expects another key under the platform's key id.
            world.mock.update { $0.signingKeys[DeliveryWorld.keyID] = P256.Signing.PrivateKey().publicKey }
            let receipt = try await world.send(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#, client)

            let platformID = world.fixture.platform.id
            try await DeliveryWorld.poll("the platform's credentials are failing") {
                try await world.db.store.platforms.find(id: platformID)?.credentialsStatus == .failing
            }
            let (_, adminToken) = try await world.db.store.adminTokens.create(tenantID: nil, name: "root")
            let view = try await client.execute(
                uri: "/admin/v1/platforms/\(platformID.uuidString.lowercased())", method: .get, headers: bearer(adminToken))
            #expect(try view.json()["credentials_status"] as? String == "failing")

            let status = try await world.status(receipt, client)
            #expect(status["status"] as? String == "sending")
            #expect(status["pending"] as? Int == 3)
            #expect(status["failed"] as? Int == 0)
            #expect(world.mock.received.isEmpty)
            // Two tries each: the first token, then the same token again (no new one within 20 minutes).
            #expect(world.mock.statistics.requests == 6)
            for device in devices {
                #expect(try await world.db.store.devices.find(platformID: platformID, uuid: device.uuid)?.active == true)
            }
        }
    }

    /// Retries wait about 1 s, 2 s, 4 s … with jitter, at most 5 minutes.
    @Test func retryBackoffGrowsWithJitterAndIsBounded() {
        for attempt in 0..<30 {
            let base = min(300_000, 1000 * (Int64(1) << min(attempt, 20)))
            for _ in 0..<20 {
                let wait = Dispatcher.backoff(attempt: attempt).milliseconds
                #expect(wait >= base / 2 && wait <= base, "attempt \(attempt): \(wait) ms")
            }
        }
        #expect(Dispatcher.backoff(attempt: 40) <= .seconds(300))
    }
}
