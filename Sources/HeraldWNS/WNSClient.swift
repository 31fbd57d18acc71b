import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends notifications to Windows Push Notification Services for one app (one package SID and
/// secret): a POST to each device's channel URI with an OAuth access token from
/// `WNSAccessTokenProvider`, over HTTP/1.1 and TLS (async-http-client, reusing connections per
/// host).
///
/// Only channel URIs on WNS's hosts (`*.notify.windows.com`) are sent to, and the client's
/// `allowedTestHost` when it was given one: the access token goes with every request, so a
/// channel URI a device made up must not receive it.
///
/// The client sorts WNS's answers into `WNSOutcome`s; acting on them is the caller's part.
package final class WNSClient: Sendable {
    /// The access tokens this client sends with.
    package let tokens: WNSAccessTokenProvider
    private let httpClient: HTTPClient
    private let endpointOverride: String?
    private let allowedTestHost: String?
    private let clock: EpochClock
    /// Requests in flight at most for one batch (`send(_:to:)`): WNS takes one device per request.
    let concurrency: Int
    /// Whether to start no new request of a batch (the process is shutting down gracefully).
    let stopStarting: @Sendable () -> Bool

    /// - Parameters:
    ///   - credentials: the package SID (`ms-app://…`) and the client secret.
    ///   - tokenEndpoint: where access tokens come from: Microsoft's, or a test server's.
    ///   - endpointOverride: an origin (`https://127.0.0.1:8443`) to send every notification to
    ///     instead of the channel's host, keeping the channel's path and query: for a test WNS.
    ///     Channel URIs must still be WNS's (or on `allowedTestHost`).
    ///   - allowedTestHost: one more host channel URIs may be on besides `*.notify.windows.com`
    ///     (`127.0.0.1` for a mock); nil in production.
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test server or a TLS proxy),
    ///     for WNS and the token endpoint alike.
    ///   - proxy: an outbound proxy (HTTP `CONNECT` or SOCKS5) for WNS and the token endpoint alike.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - clock: the wall clock (token expiry, retry dates).
    package init(
        credentials: WNSCredentials, tokenEndpoint: String = WNSAccessTokenProvider.defaultTokenEndpoint, endpointOverride: String? = nil,
        allowedTestHost: String? = nil, extraTrustedCAPEM: String? = nil, proxy: OutboundProxy? = nil,
        connectTimeout: TimeAmount = .seconds(10), clock: EpochClock = .system, concurrency: Int = 100,
        stopStarting: @escaping @Sendable () -> Bool = { false }
    ) throws {
        self.concurrency = concurrency
        self.stopStarting = stopStarting
        // Checked before the HTTP client exists: one that is never shut down traps when freed.
        guard Self.origin(of: tokenEndpoint) != nil else {
            throw WNSError.invalidEndpoint("the token endpoint '\(tokenEndpoint)' is not an http(s) URL")
        }
        if let endpointOverride {
            guard let origin = Self.origin(of: endpointOverride) else {
                throw WNSError.invalidEndpoint("the endpoint override '\(endpointOverride)' is not an http(s) origin")
            }
            self.endpointOverride = origin
        } else {
            self.endpointOverride = nil
        }
        // WNS speaks HTTP/1.1.
        let httpClient = try ProviderHTTPClient.make(
            extraTrustedCAPEM: extraTrustedCAPEM, proxy: proxy, connectTimeout: connectTimeout, applicationProtocols: ["http/1.1"])
        self.httpClient = httpClient
        self.tokens = WNSAccessTokenProvider(credentials: credentials, tokenEndpoint: tokenEndpoint, httpClient: httpClient, clock: clock)
        self.allowedTestHost = allowedTestHost
        self.clock = clock
    }

    /// Sends `notification` to one channel.
    ///
    /// A 401 makes the client fetch one new access token and send again; if WNS refuses that
    /// one as well, the outcome is `credentialsRejected` (and stays so for later sends). Throws
    /// `WNSError.channelNotAllowed` for a channel URI off WNS's hosts (nothing is sent), and
    /// network errors (no answer came).
    package func send(_ notification: WNSNotification, channelURI: String) async throws -> WNSOutcome {
        let url = try target(for: channelURI)
        let gaveUp = WNSOutcome.credentialsRejected(
            WNSRejection(status: 401, reason: .unauthorized, message: "WNS kept refusing fresh access tokens"))
        let outcomes = await tokens.send(count: 1, noToken: Self.noToken, gaveUp: .success(gaveUp)) { _, bearer in
            do {
                let response = try await httpClient.execute(request(notification, url: url, bearer: bearer), timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 64 * 1024)
                let status = Int(response.status.code)
                let text = String(decoding: body.readableBytesView.prefix(512), as: UTF8.self)
                let outcome = WNSOutcome(status: status, headers: response.headers, body: text, now: clock.now)
                if status == 401 {
                    let message = response.headers.first(name: "x-wns-error-description") ?? text
                    return [.refused(status: status, message: message, ifFailing: .success(outcome))]
                }
                return [.answered(.success(outcome))]
            } catch {
                return [.unanswered(.failure(error))]
            }
        }
        return try outcomes[0].get()
    }

    /// A send's result when no access token could be had: the token error's outcome, or the
    /// network error thrown.
    private static func noToken(_ error: any Error) -> Result<WNSOutcome, any Error> {
        guard let error = error as? WNSTokenError else { return .failure(error) }
        return .success(outcome(for: error))
    }

    /// Closes the connections (WNS's and the token endpoint's); call once, after the last send.
    package func shutdown() async throws {
        try await httpClient.shutdown()
    }

    // MARK: The request

    func request(_ notification: WNSNotification, url: String, bearer: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "content-type", value: notification.contentType)
        request.headers.add(name: "x-wns-type", value: notification.kind.rawValue)
        if let ttl = notification.ttl { request.headers.add(name: "x-wns-ttl", value: String(max(0, ttl))) }
        if let tag = notification.tag { request.headers.add(name: "x-wns-tag", value: tag) }
        if let group = notification.group { request.headers.add(name: "x-wns-group", value: group) }
        if let policy = notification.cachePolicy { request.headers.add(name: "x-wns-cache-policy", value: policy.rawValue) }
        if notification.suppressPopup { request.headers.add(name: "x-wns-suppresspopup", value: "true") }
        request.body = .bytes(ByteBuffer(bytes: notification.payload))
        return request
    }

    /// The URL to POST to: the channel URI once it is allowed, or its path and query at the override origin.
    func target(for channelURI: String) throws -> String {
        do {
            try WNSChannel.check(channelURI, allowedTestHost: allowedTestHost, field: "channel_uri")
        } catch {
            throw WNSError.channelNotAllowed(error.message)
        }
        guard let endpointOverride else { return channelURI }
        guard let components = URLComponents(string: channelURI) else {
            throw WNSError.channelNotAllowed("the channel URI '\(channelURI)' is not a URL")
        }
        var path = components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        return endpointOverride + path
    }

    static func outcome(for error: WNSTokenError) -> WNSOutcome {
        switch error.reason {
        case .refused(let oauthError):
            return .credentialsRejected(
                WNSRejection(
                    status: error.status ?? 400, reason: WNSErrorReason(oauthError: oauthError),
                    message: "the token endpoint refused the package SID and secret: \(error.message)"))
        case .failing:
            return .credentialsRejected(WNSRejection(status: error.status ?? 401, reason: .unauthorized, message: error.message))
        case .unavailable:
            return .retry(
                WNSRejection(status: error.status ?? 503, reason: .serviceUnavailable, message: "no access token: \(error.message)"),
                retryAfter: error.retryAfter)
        }
    }

    /// `scheme://host[:port]` of an http(s) URL, lower-cased; nil for anything else.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart)" + (components.port.map { ":\($0)" } ?? "")
    }
}
