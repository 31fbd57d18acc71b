import Crypto
import HeraldAPNs
import HeraldCore
import HeraldMocks

/// A mock APNs on 127.0.0.1 that accepts provider tokens signed by `key` under `keyID`.
struct SignedMockAPNs {
    static let keyID = "ABC123DEFG"

    let tls: MockTLS
    let key: P256.Signing.PrivateKey
    let server: MockAPNsServer
    let port: Int

    static func start() async throws -> SignedMockAPNs {
        let tls = try MockTLS()
        let key = P256.Signing.PrivateKey()
        var behavior = MockAPNsServer.Behavior()
        behavior.signingKeys = [keyID: key.publicKey]
        let server = MockAPNsServer(tls: tls, behavior: behavior)
        let port = try await server.start()
        return SignedMockAPNs(tls: tls, key: key, server: server, port: port)
    }

    /// A generator of the tokens the mock accepts.
    func generator() throws -> APNsTokenGenerator {
        try APNsTokenGenerator(
            credentials: APNsTokenCredentials(
                privateKeyPEM: key.pemRepresentation, keyID: Self.keyID, teamID: "DEF123GHIJ", topic: "com.example.app",
                environment: .sandbox))
    }
}
