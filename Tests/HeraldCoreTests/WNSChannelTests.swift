import HeraldCore
import Testing

@Suite struct WNSChannelTests {
    @Test func acceptsWNSHostsOnly() throws {
        #expect(try WNSChannel.check("https://wns2-by3p.notify.windows.com/w/?token=AwYAAAB") == "wns2-by3p.notify.windows.com")
        #expect(try WNSChannel.check("https://DB5.Notify.Windows.COM/?token=x") == "db5.notify.windows.com")
        for uri in [
            "https://notify.windows.com.evil.example/w/?token=x", "https://evilnotify.windows.com/w/", "https://notify.windows.com/w/",
            "http://db5.notify.windows.com/w/", "https://user:pw@db5.notify.windows.com/w/", "not a url",
            "https://127.0.0.1:8443/w/?token=x",
        ] {
            #expect(throws: ValidationError.self, "\(uri)") { try WNSChannel.check(uri) }
        }
        let error = #expect(throws: ValidationError.self) { try WNSChannel.check("https://push.example.net/w/") }
        #expect(error?.message == "'push.example.net' is not a WNS host: channel URIs are on hosts ending in .notify.windows.com")
    }

    @Test func anExplicitTestHostIsAcceptedBesideWNS() throws {
        #expect(try WNSChannel.check("https://127.0.0.1:8443/w/?token=x", allowedTestHost: "127.0.0.1") == "127.0.0.1")
        #expect(try WNSChannel.check("https://db5.notify.windows.com/w/", allowedTestHost: "127.0.0.1") == "db5.notify.windows.com")
        let error = #expect(throws: ValidationError.self) {
            try WNSChannel.check("https://127.0.0.2/w/", allowedTestHost: "127.0.0.1")
        }
        #expect(error?.message.hasSuffix("(or on the test host 127.0.0.1)") == true)
    }
}
