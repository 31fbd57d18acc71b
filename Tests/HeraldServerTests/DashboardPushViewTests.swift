import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldServer
@testable import HeraldStore

/// The dashboard's push list reads the stored push in every version.
@Suite struct DashboardPushViewTests {
    func stored(_ request: String) -> StoredPush {
        StoredPush(
            id: UUID(), applicationID: UUID(), request: request, status: "done", createdAt: 0, expiresAt: nil, targeted: 0,
            delivered: 0, failed: 0, invalidTokens: 0, expired: 0, skipped: 0, failures: [:])
    }

    func message(_ request: String) -> String? {
        DashboardController<HeraldRequestContext>.pushView(stored(request))["message"] as? String
    }

    @Test func theMessageIsShownForEveryStoredForm() throws {
        let current = try AcceptedPush.accepting(#"{"message":{"body":"typed"},"target":{"platform":"ios"}}"#).storedText
        #expect(message(current) == "typed")
        #expect(message(#"{"message":{"body":"version 0"},"target":{"platform":"ios"}}"#) == "version 0")
        // An older push today's rules refuse still shows its text.
        #expect(message(#"{"message":{"body":"refused now","custom":{"ios":{"badge":"x"}}},"target":{"platform":"ios"}}"#) == "refused now")
        #expect(message("not json") == "")
    }
}

extension DashboardPushViewTests {
    /// The silent push that tells devices their geofences changed has no body: its row says what it is.
    @Test func theGeofenceUpdatePushSaysWhatItIs() throws {
        let push = GeofenceUpdatePush.push(for: GeofenceAudience(platforms: [.ios, .android], topics: [], everyone: true))
        let shown = try #require(message(AcceptedPush(push).storedText))
        #expect(shown.contains("Geofence update"))
    }
}
