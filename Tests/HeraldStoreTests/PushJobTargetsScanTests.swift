import Testing

@testable import HeraldStore

/// A batch's devices come from the database joined as `<id>:<length in bytes>:<token>`: the
/// lengths, not a separator, say where a token ends, so a token may hold any character.
@Suite struct PushJobTargetsScanTests {
    func scanned(_ text: String) -> (ok: Bool, devices: [(Int64, String)]) {
        var devices: [(Int64, String)] = []
        let ok = PushRepository.scanJoinedTargets(text) { devices.append(($0, $1)) }
        return (ok, devices)
    }

    @Test func tokensOfAnyCharacter() {
        let devices: [(Int64, String)] = [(7, "ab:12:cd"), (12, ""), (9_000_000_000, "é,ü\n:0:"), (3, "a")]
        let text = devices.map { "\($0.0):\($0.1.utf8.count):\($0.1)" }.joined()
        let result = scanned(text)
        #expect(result.ok)
        #expect(result.devices.map(\.0) == devices.map(\.0))
        #expect(result.devices.map(\.1) == devices.map(\.1))
    }

    @Test func nothingJoinedIsNoDevice() {
        let result = scanned("")
        #expect(result.ok && result.devices.isEmpty)
    }

    /// Text not of the form stops the scan and is refused, never read past its end.
    @Test(arguments: ["1:5:abc", "1:3", "1:", "1", "x:1:a", "1:-1:a", "1:y:a", "1:1:a2:9:bc", "1:99999999999999999999:a"])
    func malformedTextIsRefused(_ text: String) {
        #expect(!scanned(text).ok)
    }
}
