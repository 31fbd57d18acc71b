import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHPACK
import NIOSSL

/// Sends messages to FCM's HTTP v1 API for one Firebase project (one service account):
/// `POST {endpoint}/v1/projects/{project_id}/messages:send`, one message per registration
/// token, with an OAuth2 access token from `FCMAccessTokenProvider`. Sends go over HeraldHTTP's
/// frame-level `HTTP2ConnectionPool` (a batch in one event-loop hop, many streams on a few
/// connections); the token endpoint over async-http-client, as are the sends to an endpoint
/// that does not offer HTTP/2.
///
/// The client sorts Google's answers into `FCMOutcome`s; acting on them is the caller's part.
package final class FCMClient: Sendable {
    /// Google's FCM endpoint.
    package static let defaultEndpoint = "https://fcm.googleapis.com"

    /// The project the service account sends for.
    package let projectID: String
    /// The access tokens this client sends with.
    package let tokens: FCMAccessTokenProvider
    private let httpClient: HTTPClient
    private let pool: HTTP2ConnectionPool
    private let authority: String
    private let sendPath: String
    private let clock: EpochClock

    /// - Parameters:
    ///   - credentials: the service account; its `token_uri` is where access tokens come from
    ///     (a test token endpoint works by putting its URL there).
    ///   - endpoint: Google's, or a test server.
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test endpoint or a TLS proxy),
    ///     for FCM and the token endpoint alike.
    ///   - proxy: an outbound proxy (HTTP `CONNECT` or SOCKS5) for FCM and the token endpoint alike.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - clock: the wall clock (token expiry, the assertion's `iat`, `Retry-After` dates).
    package init(
        credentials: FCMCredentials, endpoint: String = FCMClient.defaultEndpoint, extraTrustedCAPEM: String? = nil,
        proxy: OutboundProxy? = nil, connectTimeout: TimeAmount = .seconds(10), clock: EpochClock = .system
    ) throws {
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        guard let url = URL(string: base), url.scheme == "https", let host = url.host, !host.isEmpty else {
            throw ValidationError(
                code: "invalid_endpoint", message: "an FCM endpoint must be an https URL, not '\(endpoint)'", field: "endpoint")
        }
        let sslContext = try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: extraTrustedCAPEM)
        let httpClient = try ProviderHTTPClient.make(extraTrustedCAPEM: extraTrustedCAPEM, proxy: proxy, connectTimeout: connectTimeout)
        do {
            self.tokens = try FCMAccessTokenProvider(credentials: credentials, httpClient: httpClient, clock: clock)
        } catch {
            try? httpClient.syncShutdown()
            throw error
        }
        self.httpClient = httpClient
        self.pool = HTTP2ConnectionPool(
            host: host, port: url.port ?? 443, sslContext: sslContext, proxy: proxy, connectTimeout: connectTimeout)
        self.projectID = credentials.projectID
        self.clock = clock
        self.authority = url.port.map { "\(host):\($0)" } ?? host
        self.sendPath = url.path + "/v1/projects/\(projectID)/messages:send"
    }

    /// Sends `message` to one registration token.
    ///
    /// A 401 makes the client fetch one new access token and send again; if FCM refuses that
    /// one as well, the outcome is `credentialsRejected` (and stays so for later sends). Throws
    /// only for network errors (no answer came).
    package func send(_ message: FCMMessage, token deviceToken: String) async throws -> FCMOutcome {
        try await send(message, tokens: [deviceToken])[0].get()
    }

    /// Sends `message` to each registration token, in one hop to a connection; the results come
    /// in the tokens' order, a failure where no answer came. 401s are handled as by
    /// `send(_:token:)`, once for the batch.
    package func send(_ message: FCMMessage, tokens deviceTokens: [String]) async -> [Result<FCMOutcome, ProviderSendError>] {
        let gaveUp = FCMOutcome.credentialsRejected(
            FCMRejection(status: 401, reason: .unauthenticated, message: "FCM kept refusing fresh access tokens"))
        return await tokens.send(count: deviceTokens.count, noToken: Self.noToken, gaveUp: .success(gaveUp)) { indices, bearer in
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":authority", value: authority)
            headers.add(name: ":path", value: sendPath)
            // Indexed in HPACK's dynamic table, as for APNs: one access token for every request.
            headers.add(name: "authorization", value: "Bearer \(bearer)")
            headers.add(name: "content-type", value: "application/json; charset=utf-8")
            let requests = indices.map { index in
                HTTP2Request(headers: headers, body: ByteBuffer(bytes: Self.requestBody(message, token: deviceTokens[index])))
            }
            // An endpoint without HTTP/2 (an HTTP/1.1-only proxy in front of FCM) gets HTTP/1.1.
            return await pool.send(requests, fallingBackTo: httpClient).map { response in
                switch response {
                case .answered(let status, let responseHeaders, let body):
                    let answer = FCMErrorBody(status: status, body: body ?? ByteBuffer())
                    if answer.status == 401 && answer.reason != .thirdPartyAuthError {
                        return .refused(
                            status: answer.status, message: answer.message, ifFailing: .success(.credentialsRejected(answer.rejection)))
                    }
                    return .answered(.success(outcome(for: answer, headers: responseHeaders)))
                case .notSent:
                    return .unanswered(.failure(.notSent))
                case .failed(let reason):
                    return .unanswered(.failure(.connectionFailed(reason)))
                }
            }
        }
    }

    /// A send's result when no access token could be had.
    private static func noToken(_ error: any Error) -> Result<FCMOutcome, ProviderSendError> {
        guard let error = error as? FCMTokenError else { return .failure(.noAccessToken("\(error)")) }
        return .success(outcome(for: error))
    }

    /// Connections to FCM open and usable right now (for metrics).
    package var openConnections: Int { pool.openConnections }

    /// Why the last attempt to connect to FCM failed (TLS trust, DNS, refused, proxy, …); nil
    /// once a connection opened.
    package var unreachable: ProviderConnectionError? { pool.unreachable }

    /// Closes the connections (FCM's and the token endpoint's); call once, after the last send.
    package func shutdown() async throws {
        await pool.shutdown()
        try await httpClient.shutdown()
    }

    // MARK: Sorting answers

    private func outcome(for answer: FCMErrorBody, headers: HPACKHeaders) -> FCMOutcome {
        if answer.status == 200 {
            return .delivered(answer.messageName ?? "")
        }
        let rejection = answer.rejection
        if answer.reason.meansDeviceGone || (answer.reason == .invalidArgument && answer.isAboutTheRegistrationToken) {
            return .deviceGone(rejection)
        }
        if answer.reason.meansCredentialsRejected || answer.status == 401 || answer.status == 403 {
            return .credentialsRejected(rejection)
        }
        if answer.reason.isRetryable || answer.status == 429 || answer.status >= 500 {
            return .retry(rejection, retryAfter: RetryAfter.delay(headers.first(name: "retry-after"), at: clock.now))
        }
        return .failed(rejection)
    }

    static func outcome(for error: FCMTokenError) -> FCMOutcome {
        switch error.reason {
        case .refused(let oauthError):
            return .credentialsRejected(
                FCMRejection(
                    status: error.status ?? 400, reason: FCMErrorReason(oauthError),
                    message: "the token endpoint refused the service account: \(error.message)"))
        case .failing:
            return .credentialsRejected(FCMRejection(status: error.status ?? 401, reason: .unauthenticated, message: error.message))
        case .unavailable:
            return .retry(
                FCMRejection(
                    status: error.status ?? 503, reason: .unavailable, message: "no access token: \(error.message)"),
                retryAfter: error.retryAfter)
        }
    }

    /// `{"message":{…,"token":"…"}}`: the rendered message with the target spliced in.
    static func requestBody(_ message: FCMMessage, token: String) -> [UInt8] {
        var text = #"{"message":{"token":"#
        text += JSONValue.string(token).jsonText
        let rest = message.jsonText.dropFirst()  // after the message's opening brace
        if rest != "}" { text += "," }
        text += rest
        text += "}"
        return Array(text.utf8)
    }
}
