import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends messages to FCM's HTTP v1 API for one Firebase project (one service account):
/// `POST {endpoint}/v1/projects/{project_id}/messages:send`, one message per registration
/// token, with an OAuth2 access token from `FCMAccessTokenProvider`. Requests go over
/// async-http-client's pool (HTTP/2 over TLS), so many sends share a few connections.
///
/// The client sorts Google's answers into `FCMOutcome`s; acting on them is the caller's part.
public final class FCMClient: Sendable {
    /// Google's FCM endpoint.
    public static let defaultEndpoint = "https://fcm.googleapis.com"

    /// The project the service account sends for.
    public let projectID: String
    /// The access tokens this client sends with.
    public let tokens: FCMAccessTokenProvider
    private let httpClient: HTTPClient
    private let sendURL: String
    private let now: @Sendable () -> Int64

    /// - Parameters:
    ///   - credentials: the service account; its `token_uri` is where access tokens come from
    ///     (a test token endpoint works by putting its URL there).
    ///   - endpoint: Google's, or a test server.
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test endpoint or a TLS proxy),
    ///     for FCM and the token endpoint alike.
    ///   - proxy: an outbound proxy (HTTP `CONNECT` or SOCKS5) for FCM and the token endpoint alike.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - now: the clock, epoch seconds (token expiry, `Retry-After` dates).
    public init(
        credentials: FCMCredentials, endpoint: String = FCMClient.defaultEndpoint, extraTrustedCAPEM: String? = nil,
        proxy: OutboundProxy? = nil, connectTimeout: TimeAmount = .seconds(10), now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) throws {
        let httpClient = try ProviderHTTPClient.make(extraTrustedCAPEM: extraTrustedCAPEM, proxy: proxy, connectTimeout: connectTimeout)
        do {
            self.tokens = try FCMAccessTokenProvider(credentials: credentials, httpClient: httpClient, now: now)
        } catch {
            try? httpClient.syncShutdown()
            throw error
        }
        self.httpClient = httpClient
        self.projectID = credentials.projectID
        self.now = now
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.sendURL = "\(base)/v1/projects/\(projectID)/messages:send"
    }

    /// Sends `message` to one registration token.
    ///
    /// A 401 makes the client fetch one new access token and send again; if FCM refuses that
    /// one as well, the outcome is `credentialsRejected` (and stays so for later sends). Throws
    /// only for network errors (no answer came).
    public func send(_ message: FCMMessage, token deviceToken: String) async throws -> FCMOutcome {
        let body = Self.requestBody(message, token: deviceToken)
        var retriedAfter401 = false
        // A fresh token is fetched at most once per refusal; the bound only guards against a loop.
        for _ in 0..<3 {
            let bearer: String
            do {
                bearer = try await tokens.token()
            } catch let error as FCMTokenError {
                return Self.outcome(for: error)
            }
            var request = HTTPClientRequest(url: sendURL)
            request.method = .POST
            request.headers.add(name: "authorization", value: "Bearer \(bearer)")
            request.headers.add(name: "content-type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await httpClient.execute(request, timeout: .seconds(30))
            let responseBody = try await response.body.collect(upTo: 64 * 1024)
            let answer = FCMErrorBody(status: Int(response.status.code), body: responseBody)

            if answer.status == 401 && answer.reason != .thirdPartyAuthError {
                switch await tokens.rejected(bearer, status: answer.status, message: answer.message) {
                case .retryWithNewToken:
                    retriedAfter401 = true
                    continue
                case .markFailing:
                    return .credentialsRejected(answer.rejection)
                }
            }
            if retriedAfter401 {
                await tokens.accepted(bearer)
            }
            return outcome(for: answer, headers: response.headers)
        }
        return .credentialsRejected(FCMRejection(
            status: 401, reason: .unauthenticated, message: "FCM kept refusing fresh access tokens"))
    }

    /// Closes the connections (FCM's and the token endpoint's); call once, after the last send.
    public func shutdown() async throws {
        try await httpClient.shutdown()
    }

    // MARK: Sorting answers

    private func outcome(for answer: FCMErrorBody, headers: HTTPHeaders) -> FCMOutcome {
        if answer.status == 200 {
            return .delivered(messageName: answer.messageName ?? "")
        }
        let rejection = answer.rejection
        if answer.reason.meansDeviceGone || (answer.reason == .invalidArgument && answer.isAboutTheRegistrationToken) {
            return .deviceGone(rejection)
        }
        if answer.reason.meansCredentialsRejected || answer.status == 401 || answer.status == 403 {
            return .credentialsRejected(rejection)
        }
        if answer.reason.isRetryable || answer.status == 429 || answer.status >= 500 {
            return .retry(rejection, retryAfter: RetryAfter.seconds(headers.first(name: "retry-after"), now: now()))
        }
        return .failed(rejection)
    }

    static func outcome(for error: FCMTokenError) -> FCMOutcome {
        switch error.reason {
        case .refused(let oauthError):
            return .credentialsRejected(FCMRejection(
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
