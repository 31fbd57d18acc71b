import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// An iOS platform with its own APNs endpoint and CA sends there, whatever the process-wide
/// endpoint: here a second mock APNs with a CA of its own.
@Suite struct PlatformEndpointTests {
    @Test(arguments: Backend.available)
    func aPlatformsOwnEndpointAndCAAreUsed(_ backend: Backend) async throws {
        let ownTLS = try MockTLS()
        var behavior = MockAPNsServer.Behavior()
        behavior.acceptAnySigningKey = true
        let own = MockAPNsServer(tls: ownTLS, behavior: behavior)
        let ownPort = try await own.start()
        do {
            try await DeliveryWorld.run(backend) { world, client in
                let device = try await world.register()
                let platform = world.fixture.platform
                guard case .apnsToken(var credentials)? = try await world.db.store.platforms.credentials(id: platform.id) else {
                    Issue.record("the world's platform has no token credentials")
                    return
                }
                credentials.endpoint = "https://127.0.0.1:\(ownPort)"
                credentials.extraTrustedCAPEM = ownTLS.caCertificatePEM
                _ = try await world.db.store.platforms.update(id: platform.id, name: nil, credentials: .apnsToken(credentials))

                let receipt = try await world.send(#"{"message":{"body":"elsewhere"},"target":{"platform":"ios"}}"#, client)
                let status = try await world.finished(receipt, client)
                #expect(status["delivered"] as? Int == 1, "\(status)")
                #expect(own.received.map(\.deviceToken) == [device.registrationToken])
                #expect(world.mock.received.isEmpty)
            }
        } catch {
            await own.shutdown()
            throw error
        }
        await own.shutdown()
    }
}
