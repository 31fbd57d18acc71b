import Foundation
import HeraldCore
import HeraldMocks
import HeraldWebPush
import NIOCore
import Testing

/// Web Push through an outbound proxy (HTTP CONNECT and SOCKS5), each a real proxy listening
/// on 127.0.0.1; TLS to the push service runs inside the tunnel.
@Suite struct WebPushProxyTests {
    func send(through kind: MockProxyServer.Kind, username: String? = nil, password: String? = nil) async throws
        -> (outcome: WebPushOutcome, proxy: MockProxyServer, server: MockWebPushServer)
    {
        let tls = try MockTLS()
        let server = MockWebPushServer(tls: tls)
        _ = try await server.start()
        let proxy = MockProxyServer(kind: kind)
        let proxyPort = try await proxy.start()
        let client = try WebPushClient(
            extraTrustedCAPEM: tls.caCertificatePEM,
            proxy: OutboundProxy(
                kind: kind == .socks5 ? .socks5 : .httpConnect, host: "127.0.0.1", port: proxyPort, username: username, password: password))
        do {
            let subscriber = server.subscribe()
            let message = WebPushNotification(payload: Array(#"{"body":"through the proxy"}"#.utf8), ttl: 60)
            let outcome = try await client.send(
                message, to: try WebPushSubscription(json: subscriber.subscriptionJSON(origin: server.origin)),
                vapid: try VAPIDSigner(credentials: vapidCredentials()))
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
        #expect(proxy.tunnels.map(\.target) == [target])
        #expect(proxy.tunnels.first?.authorization == "Basic " + Data("herald:s3cret".utf8).base64EncodedString())
        #expect(server.received.map(\.text) == [#"{"body":"through the proxy"}"#])
    }

    @Test func sendsThroughASOCKS5Proxy() async throws {
        let (outcome, proxy, server) = try await send(through: .socks5)
        guard case .delivered = outcome else {
            Issue.record("not delivered: \(outcome)")
            return
        }
        #expect(proxy.tunnels.map(\.target) == [String(server.origin.dropFirst("https://".count))])
        #expect(server.received.count == 1)
    }

    /// The client resolves nothing itself: the proxy is asked for the push service's host, and
    /// this one opens tunnels on this machine only.
    @Test func theProxyIsAskedForThePushServicesHost() async throws {
        let proxy = MockProxyServer(kind: .httpConnect)
        let proxyPort = try await proxy.start()
        // The connection pool retries a refused tunnel until the connect timeout; long enough for
        // the first attempt to reach the proxy on a loaded machine.
        let client = try WebPushClient(
            proxy: OutboundProxy(kind: .httpConnect, host: "127.0.0.1", port: proxyPort), connectTimeout: .seconds(2))
        let subscriber = MockWebPushSubscriber()
        await #expect(throws: (any Error).self) {
            try await client.send(
                WebPushNotification(payload: [1], ttl: 0),
                to: try WebPushSubscription(json: subscriber.subscriptionJSON(origin: "https://push.example.net")),
                vapid: try VAPIDSigner(credentials: vapidCredentials()))
        }
        try await client.shutdown()
        await proxy.shutdown()
        #expect(!proxy.refused.isEmpty)
        #expect(Set(proxy.refused) == ["push.example.net:443"])
        #expect(proxy.tunnels.isEmpty)
    }
}
