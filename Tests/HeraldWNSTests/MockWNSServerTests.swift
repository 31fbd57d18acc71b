import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldMocks
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// What the mock WNS refuses, asked directly over HTTP/1.1 and TLS: the token endpoint's OAuth
/// checks and the notification's headers, as WNS checks them.
@Suite struct MockWNSServerTests {
    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String
    }

    func withMock(_ body: (MockWNSServer, HTTPClient) async throws -> Void) async throws {
        let tls = try MockTLS()
        var behavior = MockWNSServer.Behavior()
        behavior.clients["ms-app://s-1"] = "secret"
        let server = MockWNSServer(tls: tls, behavior: behavior)
        _ = try await server.start()
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(tls.caCertificatePEM.utf8)))]
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: configuration))
        do {
            try await body(server, client)
        } catch {
            try? await client.shutdown()
            await server.shutdown()
            throw error
        }
        try await client.shutdown()
        await server.shutdown()
    }

    func post(_ client: HTTPClient, _ url: String, headers: [(String, String)], body: String) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = HTTPHeaders(headers)
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let answer = try await response.body.collect(upTo: 64 * 1024)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: answer))
    }

    func token(_ client: HTTPClient, _ server: MockWNSServer, _ form: String) async throws -> Answer {
        try await post(client, server.tokenEndpoint, headers: [("content-type", "application/x-www-form-urlencoded")], body: form)
    }

    @Test func theTokenEndpointChecksTheClientCredentialsGrant() async throws {
        try await withMock { server, client in
            let good = "grant_type=client_credentials&client_id=ms-app%3A%2F%2Fs-1&client_secret=secret&scope=notify.windows.com"
            let granted = try await token(client, server, good)
            #expect(granted.status == 200)
            let json = try JSONDecoder().decode(JSONValue.self, from: Data(granted.body.utf8)).objectValue
            #expect(json?["token_type"] == .string("bearer"))
            #expect(json?["expires_in"] == .int(86_400))
            #expect(json?["access_token"]?.stringValue?.isEmpty == false)

            let refusals = [
                (good.replacingOccurrences(of: "client_credentials", with: "password"), "unsupported_grant_type"),
                (good.replacingOccurrences(of: "notify.windows.com", with: "s.notify.live.net"), "invalid_scope"),
                (good.replacingOccurrences(of: "secret&", with: "wrong&"), "invalid_client"),
                (good.replacingOccurrences(of: "s-1", with: "s-2"), "invalid_client"),
                ("grant_type=client_credentials&scope=notify.windows.com", "invalid_request"),
            ]
            for (form, error) in refusals {
                let answer = try await token(client, server, form)
                #expect(answer.status == 400, "\(form)")
                #expect(answer.body.contains(#""error":"\#(error)""#), "\(form)")
            }
            #expect(server.tokenRequests == 6)
        }
    }

    @Test func channelsCheckTheBearerTokenAndTheWNSHeaders() async throws {
        try await withMock { server, client in
            let granted = try await token(
                client, server, "grant_type=client_credentials&client_id=ms-app%3A%2F%2Fs-1&client_secret=secret&scope=notify.windows.com")
            let accessToken = try #require(
                try JSONDecoder().decode(JSONValue.self, from: Data(granted.body.utf8)).objectValue?["access_token"]?.stringValue)
            let toast = "<toast><visual><binding template=\"ToastGeneric\"><text>Hi</text></binding></visual></toast>"
            let good = [("authorization", "Bearer \(accessToken)"), ("x-wns-type", "wns/toast"), ("content-type", "text/xml")]
            func headers(_ changes: [(String, String?)]) -> [(String, String)] {
                var result = good
                for (name, value) in changes {
                    result.removeAll { $0.0 == name }
                    if let value { result.append((name, value)) }
                }
                return result
            }

            let accepted = try await post(client, server.channelURI(token: "c1"), headers: good, body: toast)
            #expect(accepted.status == 200)
            #expect(accepted.headers.first(name: "x-wns-status") == "received")
            #expect(accepted.headers.first(name: "x-wns-msg-id")?.count == 16)
            let withStatus = try await post(
                client, server.channelURI(), headers: headers([("x-wns-requestforstatus", "true")]), body: toast)
            #expect(withStatus.headers.first(name: "x-wns-deviceconnectionstatus") == "connected")

            let refusals: [([(String, String)], String, Int, String)] = [
                (headers([("authorization", nil)]), toast, 401, "no bearer access token"),
                (headers([("authorization", "Bearer made-up")]), toast, 401, "invalid or has expired"),
                (headers([("x-wns-type", "wns/popup")]), toast, 400, "X-WNS-Type must be"),
                (headers([("content-type", "application/octet-stream")]), toast, 400, "Content-Type text/xml"),
                (headers([("x-wns-type", "wns/badge")]), toast, 400, "<badge> root"),
                (headers([("x-wns-ttl", "soon")]), toast, 400, "X-WNS-TTL"),
                (headers([("x-wns-tag", "seventeen-chars-x")]), toast, 400, "X-WNS-Tag"),
                (headers([("x-wns-cache-policy", "sometimes")]), toast, 400, "X-WNS-Cache-Policy"),
                (
                    headers([("x-wns-type", "wns/raw"), ("content-type", "application/octet-stream"), ("x-wns-group", "g")]), "x", 400,
                    "X-WNS-Group"
                ),
                (good, String(repeating: "a", count: 5001), 413, "5001 bytes"),
                (good, "", 400, "no body"),
            ]
            for (requestHeaders, body, status, text) in refusals {
                let answer = try await post(client, server.channelURI(), headers: requestHeaders, body: body)
                #expect(answer.status == status, "\(text)")
                #expect(answer.headers.first(name: "x-wns-error-description")?.contains(text) == true, "\(text): \(answer.body)")
            }
            let notAChannel = try await post(client, server.origin + "/v1/send", headers: good, body: toast)
            #expect(notAChannel.status == 404)
            #expect(server.received.map(\.channel).first == "c1")
            #expect(server.received.count == 2)
        }
    }
}
