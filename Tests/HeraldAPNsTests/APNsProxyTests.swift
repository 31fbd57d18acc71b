import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import HeraldHTTP
import HeraldMocks
import HeraldTestSupport
import Testing

/// The APNs client through an outbound proxy (HTTP CONNECT and SOCKS5), each a real proxy on
/// 127.0.0.1; TLS and HTTP/2 to the mock APNs run inside the tunnel.
@Suite struct APNsProxyTests {
    struct Delivery {
        let outcomes: [Result<APNsOutcome, ProviderSendError>]
        let proxy: MockProxyServer
        let server: MockAPNsServer
        let port: Int
    }

    func send(
        count: Int, through kind: MockProxyServer.Kind, username: String? = nil, password: String? = nil,
        endpointHost: String = "127.0.0.1"
    ) async throws -> Delivery {
        let mock = try await SignedMockAPNs.start()
        let (server, port) = (mock.server, mock.port)
        let proxy = MockProxyServer(kind: kind)
        let proxyPort = try await proxy.start()
        let client = try APNsClient(
            endpoint: "https://\(endpointHost):\(port)", extraTrustedCAPEM: mock.tls.caCertificatePEM,
            proxy: OutboundProxy(
                kind: kind == .socks5 ? .socks5 : .httpConnect, host: "127.0.0.1", port: proxyPort, username: username,
                password: password),
            connectTimeout: .seconds(30))
        let generator = try mock.generator()
        let push = try PushInput(message: .init(body: "through the proxy"), target: .init(platform: "ios")).validated(now: 0)
        let notification = try #require(try APNsRenderer.render(push, receiptID: "receipt-1"))
        let outcomes = await client.send(
            notification, deviceTokens: (0..<count).map { _ in randomAPNsToken() }, topic: "com.example.app",
            bearer: try generator.token(issuedAt: Int64(Date().timeIntervalSince1970)))
        await client.shutdown()
        await proxy.shutdown()
        await server.shutdown()
        return Delivery(outcomes: outcomes, proxy: proxy, server: server, port: port)
    }

    func accepted(_ outcomes: [Result<APNsOutcome, ProviderSendError>]) -> Int {
        outcomes.filter { if case .success(.accepted) = $0 { true } else { false } }.count
    }

    @Test func sendsThroughAnHTTPConnectProxyWithCredentials() async throws {
        let delivery = try await send(count: 20, through: .httpConnect, username: "herald", password: "s3cret")
        #expect(accepted(delivery.outcomes) == 20)
        #expect(delivery.server.received.count == 20)
        // One connection carried the batch: one tunnel, asked for APNs' host and port.
        #expect(delivery.proxy.tunnels.map(\.target) == ["127.0.0.1:\(delivery.port)"])
        #expect(delivery.proxy.tunnels.first?.authorization == "Basic " + Data("herald:s3cret".utf8).base64EncodedString())
    }

    @Test func sendsThroughASOCKS5Proxy() async throws {
        let delivery = try await send(count: 20, through: .socks5)
        #expect(accepted(delivery.outcomes) == 20)
        #expect(delivery.server.received.count == 20)
        #expect(delivery.proxy.tunnels.map(\.target) == ["127.0.0.1:\(delivery.port)"])
    }

    /// The client resolves nothing itself: the proxy is asked for APNs' host name, and this one
    /// opens tunnels to this machine only, so the send fails without reaching anything.
    @Test(arguments: [MockProxyServer.Kind.httpConnect, .socks5])
    func aRefusedTunnelFailsTheSend(kind: MockProxyServer.Kind) async throws {
        let delivery = try await send(count: 3, through: kind, endpointHost: "api.push.example.net")
        #expect(accepted(delivery.outcomes) == 0)
        #expect(delivery.outcomes.count == 3)
        #expect(delivery.proxy.tunnels.isEmpty)
        #expect(Set(delivery.proxy.refused) == ["api.push.example.net:\(delivery.port)"])
        #expect(delivery.server.received.isEmpty)
    }
}
