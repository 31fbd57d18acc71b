import Crypto
import HeraldCore
import Testing

@testable import HeraldWebPush

@Suite struct WebPushSubscriptionTests {
    let key = Base64URL.encode(Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation))
    let auth = Base64URL.encode([UInt8](repeating: 9, count: 16))

    @Test func readsTheBrowsersJSONAndWritesItCanonically() throws {
        let json =
            #"{"keys":{"auth":"\#(auth)","p256dh":"\#(key)"},"expirationTime":null,"endpoint":"https://fcm.googleapis.com/fcm/send/abc"}"#
        let subscription = try WebPushSubscription(json: json)
        #expect(subscription.endpoint == "https://fcm.googleapis.com/fcm/send/abc")
        #expect(subscription.authSecret == [UInt8](repeating: 9, count: 16))
        #expect(subscription.json == (try RegistrationToken.normalize(json, for: .web)))
        #expect(try WebPushSubscription(endpoint: subscription.endpoint, p256dh: key, auth: auth) == subscription)
    }

    @Test func refusesWhatRegistrationRefuses() {
        #expect(throws: ValidationError.self) { try WebPushSubscription(endpoint: "http://push.example.net/x", p256dh: key, auth: auth) }
        #expect(throws: ValidationError.self) {
            try WebPushSubscription(endpoint: "https://push.example.net/x", p256dh: "AAAA", auth: auth)
        }
        #expect(throws: ValidationError.self) { try WebPushSubscription(endpoint: "https://push.example.net/x", p256dh: key, auth: "AAAA") }
    }

    @Test func theOriginIsSchemeHostAndANonDefaultPort() {
        #expect(WebPushSubscription.origin(of: "https://fcm.googleapis.com/fcm/send/abc?x=1") == "https://fcm.googleapis.com")
        #expect(WebPushSubscription.origin(of: "https://Push.Example.NET:443/p") == "https://push.example.net")
        #expect(WebPushSubscription.origin(of: "https://127.0.0.1:8443/push/x") == "https://127.0.0.1:8443")
        #expect(WebPushSubscription.origin(of: "https://[::1]:8443/push/x") == "https://[::1]:8443")
        #expect(WebPushSubscription.origin(of: "mailto:ops@example.com") == nil)
    }

    /// What a push's `failures` and the metrics count: the kind, never the endpoint the message
    /// quotes (it is the device's token).
    @Test func errorsCountUnderACodeThatQuotesNoEndpoint() {
        #expect(WebPushError.invalidEndpoint("the endpoint 'https://push.example/secret' has no origin").code == "InvalidEndpoint")
        #expect(WebPushError.invalidKey.code == "InvalidSubscriptionKey")
        #expect(WebPushError.payloadTooLarge.code == "PayloadTooLarge")
    }
}
