import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// A push to topics and custom user ids, delivered end to end: every device in the union gets
/// exactly one copy, and nobody else gets any.
@Suite struct TopicDeliveryTests {
    @Test(arguments: Backend.available)
    func topicsAndCustomUserIDsDeliverOneCopyPerDevice(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let both = try await world.register(tags: ["red", "blue"], customUserID: "ann")
            let red = try await world.register(tags: ["red"])
            let ann = try await world.register(customUserID: "ann")
            let bob = try await world.register(tags: ["green"], customUserID: "bob")
            let outsider = try await world.register(tags: ["green"])

            let receipt = try await world.send(
                #"{"message":{"body":"union"},"target":{"topics":["red","blue"],"custom_user_ids":["ann","bob"]}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["targeted"] as? Int == 4)
            #expect(status["delivered"] as? Int == 4)

            let received = world.mock.received.map(\.deviceToken)
            for device in [both, red, ann, bob] {
                #expect(received.filter { $0 == device.registrationToken }.count == 1)
            }
            #expect(!received.contains(outsider.registrationToken))
        }
    }
}
