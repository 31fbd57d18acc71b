import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// `receiptId` in delivered payloads is on by default and can be turned off per app through the
/// admin API; the change applies to batches sent after it.
@Suite struct ReceiptSwitchTests {
    @Test(arguments: Backend.available)
    func anAppCanTurnReceiptIDsOff(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let device = try await world.register()
            let first = try await world.send(#"{"message":{"body":"with"},"target":{"platform":"ios"}}"#, client)
            _ = try await world.finished(first, client)

            let (_, token) = try await world.db.store.adminTokens.create(tenantID: nil, name: "root")
            let app = world.fixture.app.id.uuidString.lowercased()
            let updated = try await client.execute(
                uri: "/admin/v1/apps/\(app)", method: .put, headers: bearer(token), body: body(#"{"include_receipt_id":false}"#))
            #expect(updated.status == .ok)
            #expect(try updated.json()["include_receipt_id"] as? Bool == false)
            let wrong = try await client.execute(
                uri: "/admin/v1/apps/\(app)", method: .put, headers: bearer(token), body: body(#"{"include_receipt_id":"no"}"#))
            #expect(wrong.status == .badRequest)

            let second = try await world.send(#"{"message":{"body":"without"},"target":{"platform":"ios"}}"#, client)
            _ = try await world.finished(second, client)

            let payloads = try world.mock.received.filter { $0.deviceToken == device.registrationToken }.map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any])
            }
            #expect(payloads.count == 2)
            let byBody = Dictionary(uniqueKeysWithValues: payloads.map { (($0["aps"] as? [String: Any])?["alert"] as? String ?? "", $0) })
            #expect(byBody["with"]?["receiptId"] as? String == first)
            #expect(byBody["without"] != nil)
            #expect(byBody["without"]?["receiptId"] == nil)
        }
    }
}
