import Foundation
import HeraldCore
import HeraldMocks
import HeraldWNS
import Testing

/// WNS through an outbound proxy (HTTP CONNECT and SOCKS5), each a real proxy listening on
/// 127.0.0.1: the token request and the notification both go through it, with TLS to the mock
/// inside the tunnel.
@Suite struct WNSProxyTests {
    func send(through kind: MockProxyServer.Kind, username: String? = nil, password: String? = nil) async throws
        -> (outcome: WNSOutcome, proxy: MockProxyServer, server: MockWNSServer)
    {
        let tls = try MockTLS()
        var behavior = MockWNSServer.Behavior()
        behavior.acceptAnyClient = true
        let server = MockWNSServer(tls: tls, behavior: behavior)
        _ = try await server.start()
        let proxy = MockProxyServer(kind: kind)
        let proxyPort = try await proxy.start()
        let client: WNSClient
        do {
            client = try WNSClient(
                credentials: WNSCredentials(clientID: "ms-app://s-1", clientSecret: "secret"), tokenEndpoint: server.tokenEndpoint,
                allowedTestHost: "127.0.0.1", extraTrustedCAPEM: tls.caCertificatePEM,
                proxy: OutboundProxy(
                    kind: kind == .socks5 ? .socks5 : .httpConnect, host: "127.0.0.1", port: proxyPort, username: username,
                    password: password))
        } catch {
            await proxy.shutdown()
            await server.shutdown()
            throw error
        }
        do {
            let outcome = try await client.send(
                WNSNotification(kind: .raw, payload: Array("through the proxy".utf8)), channelURI: server.channelURI(token: "device-1"))
            try await client.shutdown()
            await proxy.shutdown()
            await server.shutdown()
            return (outcome, proxy, server)
        } catch {
            try? await client.shutdown()
            await proxy.shutdown()
            await server.shutdown()
            throw error
        }
    }

    @Test func sendsThroughAnHTTPConnectProxy() async throws {
        let (outcome, proxy, server) = try await send(through: .httpConnect, username: "herald", password: "s3cret")
        guard case .delivered = outcome else {
            Issue.record("not delivered: \(outcome)")
            return
        }
        let target = String(server.origin.dropFirst("https://".count))
        // One tunnel for the token endpoint and the channel, which share the host.
        #expect(!proxy.tunnels.isEmpty)
        #expect(Set(proxy.tunnels.map(\.target)) == [target])
        #expect(proxy.tunnels.first?.authorization == "Basic " + Data("herald:s3cret".utf8).base64EncodedString())
        #expect(server.tokenRequests == 1)
        #expect(server.received.map(\.text) == ["through the proxy"])
    }

    @Test func sendsThroughASOCKS5Proxy() async throws {
        let (outcome, proxy, server) = try await send(through: .socks5)
        guard case .delivered = outcome else {
            Issue.record("not delivered: \(outcome)")
            return
        }
        #expect(Set(proxy.tunnels.map(\.target)) == [String(server.origin.dropFirst("https://".count))])
        #expect(server.tokenRequests == 1)
        #expect(server.received.count == 1)
    }

    /// The client resolves nothing itself: the proxy is asked for WNS's host, and this one opens
    /// tunnels on this machine only.
    @Test func theProxyIsAskedForWNSsHost() async throws {
        let proxy = MockProxyServer(kind: .socks5)
        let proxyPort = try await proxy.start()
        // The connection pool retries a refused tunnel until the connect timeout; long enough for
        // the first attempt to reach the proxy on a loaded machine.
        let client = try WNSClient(
            credentials: WNSCredentials(clientID: "ms-app://s-1", clientSecret: "secret"),
            proxy: OutboundProxy(kind: .socks5, host: "127.0.0.1", port: proxyPort), connectTimeout: .seconds(2))
        await #expect(throws: (any Error).self) {
            try await client.send(
                WNSNotification(kind: .raw, payload: [1]), channelURI: "https://wns2-by3p.notify.windows.com/w/?token=x")
        }
        try await client.shutdown()
        await proxy.shutdown()
        // The token is asked for first, at Microsoft's token endpoint.
        #expect(Set(proxy.refused) == ["login.live.com:443"])
        #expect(proxy.tunnels.isEmpty)
    }
}
