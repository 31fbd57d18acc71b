import HeraldCore
import Testing

@Suite struct OutboundProxyTests {
    @Test func readsHTTPAndSOCKS5ProxyURLs() throws {
        #expect(
            try OutboundProxy(url: "http://proxy.internal:3128") == OutboundProxy(kind: .httpConnect, host: "proxy.internal", port: 3128))
        #expect(try OutboundProxy(url: "http://proxy.internal") == OutboundProxy(kind: .httpConnect, host: "proxy.internal", port: 8080))
        #expect(
            try OutboundProxy(url: " http://ops:p%40ss@10.0.0.1:3128 ")
                == OutboundProxy(kind: .httpConnect, host: "10.0.0.1", port: 3128, username: "ops", password: "p@ss"))
        #expect(try OutboundProxy(url: "socks5://127.0.0.1:9050") == OutboundProxy(kind: .socks5, host: "127.0.0.1", port: 9050))
        #expect(try OutboundProxy(url: "socks5://gateway") == OutboundProxy(kind: .socks5, host: "gateway", port: 1080))
    }

    @Test func refusesWhatItCannotUse() {
        #expect(throws: ValidationError.self) { try OutboundProxy(url: "proxy.internal:3128") }
        #expect(throws: ValidationError.self) { try OutboundProxy(url: "https://proxy.internal") }
        #expect(throws: ValidationError.self) { try OutboundProxy(url: "socks5://user:pw@gateway:1080") }
        #expect(throws: ValidationError.self) { try OutboundProxy(url: "http://proxy.internal:0") }
    }
}
