import Foundation
import _CryptoExtras

extension MockFCMServer.Account {
    /// The account a service-account JSON describes: its `client_email`, `project_id` and the
    /// public half of its `private_key` (what Google keeps to verify assertions).
    package init(serviceAccountJSON: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(serviceAccountJSON.utf8)) as? [String: Any],
            let clientEmail = object["client_email"] as? String, let projectID = object["project_id"] as? String,
            let privateKey = object["private_key"] as? String
        else {
            throw MockServerError(message: "a service-account JSON needs client_email, project_id and private_key")
        }
        self.init(
            clientEmail: clientEmail, projectID: projectID,
            publicKey: try _RSA.Signing.PrivateKey(pemRepresentation: privateKey).publicKey)
    }
}

extension MockFCMServer {
    /// A service-account JSON with a fresh 2048-bit RSA key whose `token_uri` is `tokenURI`
    /// (the mock's `https://HOST:PORT/token`), and the account to give the mock.
    package static func makeServiceAccount(
        projectID: String = "demo-project", tokenURI: String
    ) throws -> (json: String, account: Account) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let clientEmail = "herald@\(projectID).iam.gserviceaccount.com"
        let object: [String: String] = [
            "type": "service_account",
            "project_id": projectID,
            "private_key_id": "mock",
            "private_key": key.pemRepresentation,
            "client_email": clientEmail,
            "token_uri": tokenURI,
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        return (json, Account(clientEmail: clientEmail, projectID: projectID, publicKey: key.publicKey))
    }
}
