import Foundation
import HeraldCore
import Testing

@Suite struct UUIDTextTests {
    @Test func writesWhatFoundationWritesInLowerCase() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(uuid.lowercasedString == uuid.uuidString.lowercased())
        }
        let v7 = UUID.timeOrdered(milliseconds: 1_700_000_000_000)
        #expect(v7.lowercasedString == v7.uuidString.lowercased())
    }

    @Test func readsBothCasesBack() {
        for _ in 0..<1000 {
            let uuid = UUID()
            #expect(UUID(text: uuid.lowercasedString) == uuid)
            #expect(UUID(text: uuid.uuidString) == uuid)
        }
        #expect(UUID(text: "00000000-0000-0000-0000-000000000000") == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        #expect(UUID(text: "FFFFFFFF-ffff-FfFf-ffff-FFFFFFFFFFFF")?.lowercasedString == "ffffffff-ffff-ffff-ffff-ffffffffffff")
    }

    @Test(arguments: [
        "", "not a uuid", "0000000000000000000000000000000000000",
        "00000000-0000-0000-0000-00000000000", "00000000-0000-0000-0000-0000000000000",
        "00000000-0000-0000-0000_000000000000", "0000000-00000-0000-0000-000000000000",
        "g0000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-00000000000é",
        "{00000000-0000-0000-0000-000000000000}",
    ])
    func refusesWhatFoundationRefuses(_ text: String) {
        #expect(UUID(text: text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }

    /// Foundation's parser skips leading spaces (`sscanf`); Herald's takes only the exact form.
    @Test func refusesSpaces() {
        #expect(UUID(text: " 0000000-0000-0000-0000-000000000000") == nil)
        #expect(UUID(text: "00000000-0000-0000-0000-000000000000 ") == nil)
    }
}
