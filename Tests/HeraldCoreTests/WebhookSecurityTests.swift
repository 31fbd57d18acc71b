import Foundation
import HeraldCore
import Testing

@Suite struct WebhookSignatureTests {
    let body = Array(#"{"event":"push.done","id":"evt_1"}"#.utf8)

    @Test func aReceiverVerifiesWhatHeraldSigned() {
        let header = WebhookSignature.header(secret: "whsec_test", timestamp: 1_800_000_000, body: body)
        #expect(header.hasPrefix("t=1800000000,v1="))
        #expect(WebhookSignature.verify(header: header, secret: "whsec_test", body: body, now: 1_800_000_010))
    }

    @Test func theSignatureIsHMACSHA256OfTimestampDotBody() {
        // Recomputed independently with Python: hmac.new(b"k", b"1.x", hashlib.sha256).hexdigest()
        #expect(
            WebhookSignature.header(secret: "k", timestamp: 1, body: Array("x".utf8))
                == "t=1,v1=976cb87e4f568d1c0f03f32859e90af8597cf00b978ba37c229c97d3a15b8449")
    }

    @Test func anythingChangedOrStaleFails() {
        let header = WebhookSignature.header(secret: "whsec_test", timestamp: 1_800_000_000, body: body)
        #expect(!WebhookSignature.verify(header: header, secret: "whsec_other", body: body, now: 1_800_000_000))
        #expect(!WebhookSignature.verify(header: header, secret: "whsec_test", body: body + [0x20], now: 1_800_000_000))
        #expect(!WebhookSignature.verify(header: header, secret: "whsec_test", body: body, now: 1_800_000_301))
        #expect(!WebhookSignature.verify(header: "t=1800000000", secret: "whsec_test", body: body, now: 1_800_000_000))
        #expect(!WebhookSignature.verify(header: "garbage", secret: "whsec_test", body: body, now: 1_800_000_000))
        // A rotated secret: either signature matches.
        let old = WebhookSignature.header(secret: "whsec_old", timestamp: 1_800_000_000, body: body)
        let both = header + "," + old.split(separator: ",")[1]
        #expect(WebhookSignature.verify(header: both, secret: "whsec_old", body: body, now: 1_800_000_000))
    }
}

@Suite struct WebhookAddressPolicyTests {
    @Test func publicAddressesAreAllowed() {
        let policy = WebhookAddressPolicy()
        for address in ["93.184.216.34", "8.8.8.8", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8", "64:ff9b::808:808"] {
            #expect(policy.allows(address), "\(address)")
        }
    }

    @Test func privateLoopbackLinkLocalAndReservedAreRefused() {
        let policy = WebhookAddressPolicy()
        for address in [
            "127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
            "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1", "192.0.2.1", "::1", "::", "fe80::1", "fd00::1", "fc00::1",
            "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2001:db8::1", "not-an-address", "localhost", "",
        ] {
            #expect(!policy.allows(address), "\(address)")
        }
        #expect(WebhookAddressPolicy().allows("172.32.0.1"))  // just past 172.16.0.0/12
    }

    @Test func theOperatorMayAllowPrivateAddresses() {
        let policy = WebhookAddressPolicy(allowsPrivate: true)
        #expect(policy.allows("127.0.0.1"))
        #expect(policy.allows("::1"))
        #expect(!policy.allows("localhost"))  // still only addresses
    }
}
