import Crypto
import HeraldCore
import Testing

/// Values that hold a secret describe themselves without it, however they are printed.
@Suite struct RedactingDescriptionTests {
    /// Every way Swift turns a value into text.
    static func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    @Test func aProxyShowsItsAddressAndUserButNotThePassword() throws {
        let proxy = try OutboundProxy(url: "http://courier:s3cret-pass@proxy.internal:3128")
        for text in Self.renderings(proxy) {
            #expect(!text.contains("s3cret-pass"), "\(text)")
        }
        #expect(proxy.description == "http://courier:<redacted>@proxy.internal:3128")
        // Inside another value, too (service-lifecycle printed the configuration that held it).
        #expect(!String(describing: [proxy]).contains("s3cret-pass"))
    }

    @Test func credentialsShowIdentifiersButNoKeyMaterial() throws {
        let key = P256.Signing.PrivateKey()
        let input = CredentialsInput(
            p8: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", password: "p12-pass", topic: "com.example.news",
            clientSecret: "wns-secret")
        let validated = try input.validate(for: .ios)
        let keyLine = try #require(key.pemRepresentation.split(separator: "\n").dropFirst().first.map(String.init))
        for text in Self.renderings(input) + Self.renderings(validated) {
            for secret in [keyLine, "p12-pass", "wns-secret"] {
                #expect(!text.contains(secret), "\(text)")
            }
            #expect(text.contains("ABC123DEFG"), "\(text)")
        }
        let wns = PlatformCredentials.wns(WNSCredentials(clientID: "ms-app://s-1", clientSecret: "wns-secret"))
        #expect(wns.description == "wns(client_id: ms-app://s-1)")
    }
}
