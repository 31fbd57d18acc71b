import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/1.1 + TLS server that plays both Microsoft parts a WNS sender talks to:
///
/// - `POST /accesstoken.srf`, the token endpoint: it checks the client-credentials form
///   (`grant_type=client_credentials`, a known `client_id` with its `client_secret`, `scope=notify.windows.com`)
///   and issues an access token with `expires_in`, or answers 400 with an OAuth error;
/// - channel URIs, `POST /w/?token=…`: it checks the bearer token is one it issued and has not
///   expired, `X-WNS-Type`, the `Content-Type` that goes with it, the XML root of a toast, tile
///   or badge, the optional `X-WNS-*` headers and the 5000-byte limit, then answers as WNS does
///   (200 with `X-WNS-Status` and `X-WNS-Msg-ID`, or an error status with
///   `X-WNS-Error-Description`), recording what it accepted.
///
/// Faults can be injected: gone channels (410), unknown channels (404), channels of another app
/// (403), 406 throttling with `X-WNS-CONTINUE-AFTER`, 503 and 500 bursts, revoked access tokens
/// (401, to make a client refresh), and an unavailable token endpoint.
package final class MockWNSServer: Sendable {
    /// A notification the mock accepted.
    package struct Received: Sendable, Equatable {
        /// The channel's token (the `token` of its URI's query).
        package var channel: String
        /// `X-WNS-Type`.
        package var type: String
        /// Request headers, names lower-cased.
        package var headers: [String: String]
        /// The body as sent.
        package var body: [UInt8]
        /// The access token it came with.
        package var accessToken: String

        /// The body as text.
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// How the mock treats requests.
    package struct Behavior: Sendable {
        /// Package SIDs (`client_id`) and their secrets; anyone else gets `invalid_client`.
        package var clients: [String: String] = [:]
        /// Accept any client id and secret (when no clients are known).
        package var acceptAnyClient = false
        /// `expires_in` of the access tokens it issues (WNS's are a day).
        package var tokenLifetime: Int64 = 86_400
        /// Channel tokens that answer 410 Gone (the channel expired).
        package var gone: Set<String> = []
        /// Channel tokens that answer 404 Not Found (WNS does not know them).
        package var notFound: Set<String> = []
        /// Channel tokens of another app: 403 Forbidden.
        package var forbidden: Set<String> = []
        /// The next this-many notifications that would be accepted answer 406 Not Acceptable (throttled).
        package var throttled = 0
        /// `X-WNS-CONTINUE-AFTER` sent with 406, when set (seconds or an HTTP date).
        package var continueAfter: String?
        /// The next this-many notifications that would be accepted answer 503 Service Unavailable.
        package var serviceUnavailable = 0
        /// `Retry-After` sent with 503, when set.
        package var retryAfter: String?
        /// The next this-many notifications that would be accepted answer 500 Internal Server Error.
        package var internalErrors = 0
        /// The next this-many notifications with a valid access token answer 401 and revoke that token.
        package var rejectAccessTokens = 0
        /// The next this-many token requests answer 503.
        package var tokenEndpointUnavailable = 0
        /// Bodies larger than this answer 413 (WNS's limit).
        package var maximumBodyBytes = 5000
        /// The mock's clock (read in epoch seconds, as JWTs count): access-token expiry.
        package var clock: EpochClock = .system
        /// Called with each notification accepted, on the connection's event loop (to print it, say).
        package var onReceive: (@Sendable (Received) -> Void)?
        /// Keep each accepted notification in `received`; a benchmark turns it off and reads `arrivals`.
        package var recordsMessages = true

        package init() {}
    }

    private struct State {
        var behavior: Behavior
        var received: [Received] = []
        /// Access tokens issued, and when each expires.
        var issued: [String: Int64] = [:]
        var tokenRequests = 0
        var channel: (any Channel)?
        var port: Int?
    }

    private let tls: MockTLS
    private let group: MultiThreadedEventLoopGroup
    private let state: Mutex<State>

    package init(tls: MockTLS, behavior: Behavior = Behavior(), threads: Int = 1) {
        self.tls = tls
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.state = Mutex(State(behavior: behavior))
    }

    /// Starts listening on `host:port` (0 picks a free port) and returns the port.
    package func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let (channel, bound) = try await MockHTTPListener.bind(
            group: group, tls: tls, protocols: ["http/1.1"], host: host, port: port
        ) { [self] head, body in answer(head: head, body: body).response }
        state.withLock {
            $0.channel = channel
            $0.port = bound
        }
        return bound
    }

    /// Stops listening and closes the connections.
    package func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    /// `https://127.0.0.1:<port>` once started.
    package var origin: String { "https://127.0.0.1:\(state.withLock { $0.port ?? 0 })" }

    /// The token endpoint's URL.
    package var tokenEndpoint: String { origin + "/accesstoken.srf" }

    /// A channel URI on this mock: `token`, or a fresh random one.
    package func channelURI(token: String? = nil) -> String {
        origin + "/w/?token=" + (token ?? Self.randomToken())
    }

    /// What was accepted so far.
    package var received: [Received] { state.withLock { $0.received } }

    /// How many notifications were accepted so far, and when each arrived.
    package let arrivals = ArrivalLog()

    /// How many requests reached the token endpoint.
    package var tokenRequests: Int { state.withLock { $0.tokenRequests } }

    /// Changes the behavior while running.
    package func update(_ change: (inout Behavior) -> Void) {
        state.withLock { change(&$0.behavior) }
    }

    static func randomToken() -> String {
        Base64URL.encode((0..<24).map { _ in UInt8.random(in: 0...255) })
    }

    // MARK: Answering

    struct Answer {
        var status: HTTPResponseStatus
        var headers: [(String, String)] = []
        var body: String = ""

        /// A body without a content type is plain text.
        var response: MockHTTPResponse {
            var headers = headers
            if !body.isEmpty, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                headers.append(("content-type", "text/plain; charset=utf-8"))
            }
            return MockHTTPResponse(status: status, headers: headers, body: ByteBuffer(string: body))
        }
    }

    func answer(head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        let parts = head.uri.split(separator: "?", maxSplits: 1).map(String.init)
        let path = parts.first ?? head.uri
        if path == "/accesstoken.srf" {
            guard head.method == .POST else { return Self.oauthError(.methodNotAllowed, "invalid_request", "use POST") }
            return token(head: head, body: body)
        }
        guard path == "/w/" || path == "/w", parts.count == 2,
            let channel = MockFCMServer.formFields(parts[1])["token"], !channel.isEmpty
        else {
            return Self.wnsError(.notFound, "the mock WNS serves /accesstoken.srf and channels at /w/?token=…")
        }
        guard head.method == .POST else {
            return Self.wnsError(.methodNotAllowed, "notifications are POSTed", headers: [("allow", "POST, DELETE")])
        }
        return notify(channel: channel, head: head, body: body)
    }

    // MARK: The token endpoint

    private func token(head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        let (behavior, unavailable) = state.withLock { state -> (Behavior, Bool) in
            state.tokenRequests += 1
            guard state.behavior.tokenEndpointUnavailable > 0 else { return (state.behavior, false) }
            state.behavior.tokenEndpointUnavailable -= 1
            return (state.behavior, true)
        }
        if unavailable {
            return Self.oauthError(.serviceUnavailable, "temporarily_unavailable", "the mock token endpoint is told to be unavailable")
        }
        guard head.headers.first(name: "content-type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            return Self.oauthError(.badRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
        }
        let form = MockFCMServer.formFields(String(decoding: body.readableBytesView, as: UTF8.self))
        guard form["grant_type"] == "client_credentials" else {
            return Self.oauthError(.badRequest, "unsupported_grant_type", "grant_type must be client_credentials")
        }
        guard let clientID = form["client_id"], !clientID.isEmpty, let secret = form["client_secret"], !secret.isEmpty else {
            return Self.oauthError(.badRequest, "invalid_request", "client_id and client_secret are required")
        }
        guard form["scope"] == "notify.windows.com" else {
            return Self.oauthError(.badRequest, "invalid_scope", "scope must be notify.windows.com")
        }
        if let known = behavior.clients[clientID] {
            guard known == secret else { return Self.oauthError(.badRequest, "invalid_client", "the client secret is wrong") }
        } else if !behavior.acceptAnyClient {
            return Self.oauthError(.badRequest, "invalid_client", "no app with the package SID \(clientID)")
        }
        let accessToken = "EgA-mock-" + Self.randomToken()
        state.withLock { $0.issued[accessToken] = behavior.clock.now.epochSeconds + behavior.tokenLifetime }
        let json = JSONValue.object([
            "access_token": .string(accessToken), "token_type": .string("bearer"), "expires_in": .int(behavior.tokenLifetime),
        ]).jsonText
        return Answer(status: .ok, headers: [("content-type", "application/json"), ("cache-control", "no-store")], body: json)
    }

    // MARK: Channels

    private func notify(channel: String, head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        let behavior = state.withLock { $0.behavior }
        let parts = head.headers.first(name: "authorization")?.split(separator: " ", maxSplits: 1) ?? []
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return Self.wnsError(.unauthorized, "the request has no bearer access token")
        }
        let accessToken = String(parts[1])
        // Checked and, when told to, revoked in one step, so concurrent requests agree.
        let refusal = state.withLock { state -> Answer? in
            guard let expiresAt = state.issued[accessToken], expiresAt > behavior.clock.now.epochSeconds else {
                return Self.wnsError(.unauthorized, "the access token is invalid or has expired")
            }
            if state.behavior.rejectAccessTokens > 0 {
                state.behavior.rejectAccessTokens -= 1
                state.issued[accessToken] = nil
                return Self.wnsError(.unauthorized, "the access token was revoked")
            }
            return nil
        }
        if let refusal { return refusal }

        if behavior.gone.contains(channel) { return Self.wnsError(.gone, "the channel expired") }
        if behavior.notFound.contains(channel) { return Self.wnsError(.notFound, "the channel URI is not valid or not recognized") }
        if behavior.forbidden.contains(channel) {
            return Self.wnsError(.forbidden, "the access token is not of the app that requested the channel")
        }
        if let problem = Self.check(head.headers, body: body, maximumBodyBytes: behavior.maximumBodyBytes) { return problem }

        enum Fault { case throttled, unavailable, internalError }
        let fault = state.withLock { state -> Fault? in
            if state.behavior.throttled.takeFault() { return .throttled }
            if state.behavior.serviceUnavailable.takeFault() { return .unavailable }
            if state.behavior.internalErrors.takeFault() { return .internalError }
            return nil
        }
        switch fault {
        case .throttled?:
            return Self.wnsError(
                .notAcceptable, "the sender exceeded its throttle limit",
                headers: behavior.continueAfter.map { [("x-wns-continue-after", $0)] } ?? [])
        case .unavailable?:
            return Self.wnsError(
                .serviceUnavailable, "the service is unavailable", headers: behavior.retryAfter.map { [("retry-after", $0)] } ?? [])
        case .internalError?:
            return Self.wnsError(.internalServerError, "internal error")
        case nil:
            break
        }

        arrivals.record()
        let requestsStatus = head.headers.first(name: "x-wns-requestforstatus") == "true"
        if behavior.recordsMessages || behavior.onReceive != nil {
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let received = Received(
                channel: channel, type: headers["x-wns-type"] ?? "", headers: headers, body: Array(body.readableBytesView),
                accessToken: accessToken)
            if behavior.recordsMessages { state.withLock { $0.received.append(received) } }
            behavior.onReceive?(received)
        }
        var answer: [(String, String)] = [("x-wns-status", "received"), ("x-wns-msg-id", Self.messageID()), ("x-wns-debug-trace", "MOCK")]
        if requestsStatus { answer.append(("x-wns-deviceconnectionstatus", "connected")) }
        return Answer(status: .ok, headers: answer)
    }

    /// The notification's headers and body, as WNS checks them; nil when they are good.
    static func check(_ headers: HTTPHeaders, body: ByteBuffer, maximumBodyBytes: Int) -> Answer? {
        guard let typeName = headers.first(name: "x-wns-type"), let kind = WNSNotification.Kind(rawValue: typeName.lowercased()) else {
            return wnsError(.badRequest, "X-WNS-Type must be wns/toast, wns/tile, wns/badge or wns/raw")
        }
        let contentType = headers.first(name: "content-type")?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard contentType == kind.contentType else {
            return wnsError(
                .badRequest, "a \(kind.rawValue) notification has Content-Type \(kind.contentType), not \(contentType ?? "none")")
        }
        if let ttl = headers.first(name: "x-wns-ttl"), Int64(ttl).map({ $0 < 0 }) ?? true {
            return wnsError(.badRequest, "X-WNS-TTL is a number of seconds")
        }
        if let policy = headers.first(name: "x-wns-cache-policy"), !["cache", "no-cache"].contains(policy.lowercased()) {
            return wnsError(.badRequest, "X-WNS-Cache-Policy is cache or no-cache")
        }
        for name in ["x-wns-suppresspopup", "x-wns-requestforstatus"] {
            if let flag = headers.first(name: name), !["true", "false"].contains(flag.lowercased()) {
                return wnsError(.badRequest, "\(name) is true or false")
            }
        }
        if let tag = headers.first(name: "x-wns-tag") {
            guard kind == .toast || kind == .tile else { return wnsError(.badRequest, "X-WNS-Tag is for toasts and tiles") }
            guard !tag.isEmpty, tag.count <= 16 else { return wnsError(.badRequest, "X-WNS-Tag is 1 to 16 characters") }
        }
        if let group = headers.first(name: "x-wns-group") {
            guard kind == .toast else { return wnsError(.badRequest, "X-WNS-Group is for toasts") }
            guard !group.isEmpty, group.count <= 16 else { return wnsError(.badRequest, "X-WNS-Group is 1 to 16 characters") }
        }
        if headers.first(name: "x-wns-suppresspopup") != nil, kind != .toast {
            return wnsError(.badRequest, "X-WNS-SuppressPopup is for toasts")
        }
        guard body.readableBytes > 0 else { return wnsError(.badRequest, "the notification has no body") }
        guard body.readableBytes <= maximumBodyBytes else {
            return wnsError(.payloadTooLarge, "the payload is \(body.readableBytes) bytes, over the \(maximumBodyBytes)-byte limit")
        }
        if let root = kind.rootElement {
            guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
                return wnsError(.badRequest, "the XML is not UTF-8")
            }
            guard WNSRenderer.rootElement(of: text) == root else {
                return wnsError(.badRequest, "a \(kind.rawValue) notification is XML with a <\(root)> root element")
            }
        }
        return nil
    }

    // MARK: Answers in WNS's shapes

    /// An error status with `X-WNS-Error-Description` (and the same text as the body, for people with curl).
    static func wnsError(_ status: HTTPResponseStatus, _ description: String, headers: [(String, String)] = []) -> Answer {
        Answer(
            status: status,
            headers: headers + [("x-wns-error-description", description), ("x-wns-msg-id", messageID()), ("x-wns-debug-trace", "MOCK")],
            body: description)
    }

    /// An OAuth error answer (RFC 6749 §5.2), as the token endpoint gives it.
    static func oauthError(_ status: HTTPResponseStatus, _ error: String, _ description: String) -> Answer {
        let json = JSONValue.object(["error": .string(error), "error_description": .string(description)]).jsonText
        return Answer(status: status, headers: [("content-type", "application/json")], body: json)
    }

    /// Sixteen hex digits, like WNS's message ids.
    static func messageID() -> String {
        Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) }).uppercased()
    }
}
