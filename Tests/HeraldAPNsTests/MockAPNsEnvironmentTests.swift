import Foundation
import HeraldCore
import HeraldHTTP
import NIOHPACK
import Testing

/// The mock plays Apple's sandbox or production: only the sandbox names each accepted
/// notification with an `apns-unique-id`.
@Suite struct MockAPNsEnvironmentTests {
    /// The headers of the answers to `count` notifications, all of which must be accepted.
    private func answerHeaders(environment: APNsEnvironment, count: Int) async throws -> [HPACKHeaders] {
        try await SignedMockAPNs.rawResponses(count: count, change: { $0.environment = environment }).map { response in
            guard case .answered(200, let headers, _) = response else { throw MockAPNsEnvironmentError(response: "\(response)") }
            return headers
        }
    }

    @Test func sandboxAnswersWithDistinctUniqueIDs() async throws {
        let headers = try await answerHeaders(environment: .sandbox, count: 3)
        let ids = headers.compactMap { $0.first(name: "apns-unique-id") }
        #expect(ids.count == 3)
        #expect(Set(ids).count == 3)
        for id in ids { #expect(UUID(uuidString: id) != nil) }
        #expect(headers.allSatisfy { $0.first(name: "apns-id") != nil })
    }

    @Test func productionAnswersWithoutUniqueIDs() async throws {
        let headers = try await answerHeaders(environment: .production, count: 3)
        #expect(headers.allSatisfy { $0.first(name: "apns-unique-id") == nil })
        #expect(headers.allSatisfy { $0.first(name: "apns-id") != nil })
    }
}

private struct MockAPNsEnvironmentError: Error {
    let response: String
}
