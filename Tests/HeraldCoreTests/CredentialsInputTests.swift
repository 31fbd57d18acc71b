import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldTestSupport
import Testing

@Suite struct CredentialsInputTests {
    let p8 = P256.Signing.PrivateKey().pemRepresentation

    @Test func acceptsAnAPNsSigningKey() throws {
        let credentials = try CredentialsInput(
            p8: p8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.app", environment: "sandbox"
        ).validate(for: .ios)
        guard case .apnsToken(let token) = credentials else {
            Issue.record("not token auth")
            return
        }
        #expect(token.environment == .sandbox)
        #expect(credentials.summary.fields["key_id"] == "ABC123DEFG")
        #expect(credentials.summary.fields.values.allSatisfy { !$0.contains("PRIVATE KEY") })
    }

    @Test func anIOSPlatformMayHaveItsOwnEndpointAndCA() throws {
        var input = CredentialsInput(p8: p8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.app")
        input.endpoint = "https://apns-proxy.internal:8443"
        input.extraCAPEM = try MockTLS().caCertificatePEM
        guard case .apnsToken(let token) = try input.validate(for: .ios) else {
            Issue.record("not token auth")
            return
        }
        #expect(token.endpoint == "https://apns-proxy.internal:8443")
        #expect(token.extraTrustedCAPEM != nil)
        #expect(try input.validate(for: .ios).summary.fields["endpoint"] == "https://apns-proxy.internal:8443")

        input.endpoint = "http://apns-proxy.internal"
        #expect(throws: ValidationError.self) { try input.validate(for: .ios) }
        do { _ = try input.validate(for: .ios) } catch { #expect(error.field == "credentials.endpoint") }
        input.endpoint = "https://apns-proxy.internal/3/device"
        do { _ = try input.validate(for: .ios) } catch { #expect(error.field == "credentials.endpoint") }
        input.endpoint = nil
        input.extraCAPEM = "not a certificate"
        do {
            _ = try input.validate(for: .ios)
            Issue.record("a bad CA was accepted")
        } catch {
            #expect(error.field == "credentials.extra_ca_pem")
        }
    }

    @Test func namesTheFieldOfAMalformedP8() {
        let error = #expect(throws: ValidationError.self) {
            try CredentialsInput(
                p8: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----", keyID: "ABC123DEFG",
                teamID: "DEF123GHIJ", topic: "com.example.app"
            ).validate(for: .ios)
        }
        #expect(error?.field == "credentials.p8")
    }

    @Test func rejectsMalformedAppleIdentifiers() {
        let error = #expect(throws: ValidationError.self) {
            try CredentialsInput(p8: p8, keyID: "short", teamID: "DEF123GHIJ", topic: "t").validate(for: .ios)
        }
        #expect(error?.field == "credentials.key_id")
        let missing = #expect(throws: ValidationError.self) {
            try CredentialsInput(p8: p8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ").validate(for: .ios)
        }
        #expect(missing?.field == "credentials.topic")
        let spaced = #expect(throws: ValidationError.self) {
            try CredentialsInput(p8: p8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example app").validate(for: .ios)
        }
        #expect(spaced?.field == "credentials.topic")
        let environment = #expect(throws: ValidationError.self) {
            try CredentialsInput(p8: p8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "t", environment: "staging").validate(for: .ios)
        }
        #expect(environment?.field == "credentials.environment")
    }

    @Test(arguments: [P12Fixtures.legacy, P12Fixtures.modern])
    func acceptsAP12WithItsPassword(_ p12: String) throws {
        let credentials = try CredentialsInput(p12: p12, password: P12Fixtures.password, topic: "com.example.app").validate(for: .ios)
        guard case .apnsCertificate(let certificate) = credentials else {
            Issue.record("not certificate auth")
            return
        }
        #expect(certificate.environment == .production)
        #expect(!certificate.pkcs12.isEmpty)
    }

    @Test func rejectsAP12WithTheWrongPassword() {
        let error = #expect(throws: ValidationError.self) {
            try CredentialsInput(p12: P12Fixtures.legacy, password: "wrong", topic: "com.example.app").validate(for: .ios)
        }
        #expect(error?.field == "credentials.password")
        #expect(error?.message.contains("password") == true)
    }

    @Test func rejectsAP12ThatIsNotBase64() {
        let error = #expect(throws: ValidationError.self) {
            try CredentialsInput(p12: "***", password: "x", topic: "com.example.app").validate(for: .ios)
        }
        #expect(error?.field == "credentials.p12")
    }

    @Test func acceptsAServiceAccountAsTextOrObject() throws {
        let json = try serviceAccountJSON(projectID: "my-project")
        let credentials = try CredentialsInput(serviceAccount: JSONText(json)).validate(for: .android)
        guard case .fcm(let fcm) = credentials else {
            Issue.record("not fcm")
            return
        }
        #expect(fcm.projectID == "my-project")
        #expect(fcm.tokenURI == "https://oauth2.googleapis.com/token")
    }

    @Test func acceptsTheServiceAccountEmbeddedAsAnObject() throws {
        let json = try serviceAccountJSON(projectID: "embedded")
        let body = #"{"service_account":\#(json)}"#
        let input = try JSONDecoder().decode(CredentialsInput.self, from: Data(body.utf8))
        guard case .fcm(let fcm) = try input.validate(for: .android) else {
            Issue.record("not fcm")
            return
        }
        #expect(fcm.projectID == "embedded")
        #expect(fcm.privateKeyPEM.contains("PRIVATE KEY"))
    }

    @Test func namesWhatIsWrongWithAServiceAccount() throws {
        let notJSON = #expect(throws: ValidationError.self) {
            try CredentialsInput(serviceAccount: JSONText("{not json")).validate(for: .android)
        }
        #expect(notJSON?.field == "credentials.service_account")
        let wrongType = #expect(throws: ValidationError.self) {
            try CredentialsInput(serviceAccount: JSONText(#"{"type":"authorized_user"}"#)).validate(for: .android)
        }
        #expect(wrongType?.field == "credentials.service_account.type")
        let badKey = #expect(throws: ValidationError.self) {
            try CredentialsInput(
                serviceAccount: JSONText(
                    #"{"type":"service_account","project_id":"p","client_email":"e@x","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}"#
                )
            ).validate(for: .android)
        }
        #expect(badKey?.field == "credentials.service_account.private_key")
        let noProject = #expect(throws: ValidationError.self) {
            try CredentialsInput(serviceAccount: JSONText(#"{"type":"service_account"}"#)).validate(for: .android)
        }
        #expect(noProject?.field == "credentials.service_account.project_id")
    }

    @Test func aLegacyServerKeyIsRefusedWithWhatReplacesIt() throws {
        let input = try JSONDecoder().decode(CredentialsInput.self, from: Data(#"{"server_key":"AAAA1234:APA91b"}"#.utf8))
        let error = #expect(throws: ValidationError.self) { try input.validate(for: .android) }
        #expect(error?.code == "platform_retired")
        #expect(error?.field == "credentials.server_key")
        #expect(error?.message.contains("service_account") == true)
    }

    @Test func generatesAVAPIDKeyPairOrKeepsTheGivenOne() throws {
        let generated = try CredentialsInput(subject: "mailto:ops@example.com").validate(for: .web)
        guard case .webPush(let vapid) = generated else {
            Issue.record("not vapid")
            return
        }
        #expect(Base64URL.decode(vapid.publicKey)?.count == 65)
        let key = P256.Signing.PrivateKey()
        let given = try CredentialsInput(
            subject: "https://example.com", vapidPrivateKey: Base64URL.encode(Array(key.rawRepresentation))
        ).validate(for: .web)
        guard case .webPush(let kept) = given else {
            Issue.record("not vapid")
            return
        }
        #expect(kept.publicKey == Base64URL.encode(Array(key.publicKey.x963Representation)))
        #expect(throws: ValidationError.self) { try CredentialsInput(subject: "ops@example.com").validate(for: .web) }
        #expect(throws: ValidationError.self) { try CredentialsInput(subject: "mailto:a@b", vapidPrivateKey: "AAAA").validate(for: .web) }
    }

    @Test func requiresWNSClientCredentials() throws {
        _ = try CredentialsInput(clientID: "ms-app://s-1", clientSecret: "s").validate(for: .windows)
        let error = #expect(throws: ValidationError.self) { try CredentialsInput(clientID: "ms-app://s-1").validate(for: .windows) }
        #expect(error?.field == "credentials.client_secret")
    }
}
