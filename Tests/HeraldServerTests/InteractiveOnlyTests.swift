import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// `"interactive-only": true` reaches only the devices that can show interactive notifications,
/// across fan-out pages that may hold none of them.
@Suite struct InteractiveOnlyTests {
    @Test(arguments: Backend.available)
    func onlyDevicesThatCanShowActionsGetAnInteractiveOnlyPush(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: 2)) { world, client in
            var able: Set<String> = []
            for version in ["7.1", "6.0", "7.0", "8.0", "17.2", nil, "9.3"] as [String?] {
                let token = randomAPNsToken()
                _ = try await world.db.store.devices.register(
                    on: world.fixture.platform,
                    try RegistrationInput(
                        osVersion: version.map { .set($0) } ?? .unchanged, registrationToken: token
                    ).validated(for: .ios, requireToken: true))
                if let version, (Int(version.split(separator: ".")[0]) ?? 0) >= 8 { able.insert(token) }
            }
            let receipt = try await world.send(
                #"{"message":{"body":"Reply?","custom":{"ios":{"category":"REPLY"}}},"target":{"platforms":["ios"],"interactive-only":true}}"#,
                client)
            let status = try await world.finished(receipt, client)
            #expect(status["targeted"] as? Int == 3)
            #expect(status["delivered"] as? Int == 3)
            #expect(Set(world.mock.received.map(\.deviceToken)) == able)
        }
    }
}
