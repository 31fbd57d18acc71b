import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore

/// OAuth access tokens for one Windows app (package SID and secret): asks the token endpoint
/// with the client-credentials grant, caches the token and renews it before it expires, with at
/// most one request in flight however many senders ask (`WNSTokenStateMachine` decides; this
/// actor does the I/O).
public actor WNSAccessTokenProvider {
    /// Microsoft's token endpoint for WNS.
    public static let defaultTokenEndpoint = "https://login.live.com/accesstoken.srf"
    /// The scope WNS tokens are asked for.
    public static let scope = "notify.windows.com"
    /// The lifetime assumed when the endpoint states no `expires_in` (seconds).
    static let assumedLifetime: Int64 = 3600

    /// What the token endpoint granted.
    struct Grant: Sendable {
        var accessToken: String
        /// Seconds from the request.
        var expiresIn: Int64
    }

    /// Asks the endpoint for a grant; throws `WNSTokenError` for an answer that is not one.
    typealias Exchange = @Sendable () async throws -> Grant

    private let exchange: Exchange
    private let now: @Sendable () -> Int64
    private var machine = WNSTokenStateMachine()
    /// The request in flight, awaited by every caller that needs a token meanwhile.
    private var inFlight: Task<String, any Error>?
    /// Why the credentials are failing, once they are.
    private var failure: WNSTokenError?
    /// How many requests were made to the token endpoint (for tests and metrics).
    public private(set) var exchanges = 0

    /// - Parameters:
    ///   - tokenEndpoint: Microsoft's, or a test server's.
    ///   - httpClient: the client to reach it with.
    ///   - now: the clock, epoch seconds.
    public init(
        credentials: WNSCredentials, tokenEndpoint: String = WNSAccessTokenProvider.defaultTokenEndpoint, httpClient: HTTPClient,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) {
        self.init(now: now) {
            try await Self.exchange(credentials, at: tokenEndpoint, httpClient: httpClient, now: now)
        }
    }

    init(now: @escaping @Sendable () -> Int64, exchange: @escaping Exchange) {
        self.now = now
        self.exchange = exchange
    }

    /// A token to send with: the cached one, or the one a (shared) request brings.
    ///
    /// Throws `WNSTokenError` when the endpoint refuses or fails, or the credentials are
    /// failing; network errors as they come.
    public func token() async throws -> String {
        switch machine.nextToken(now: now()) {
        case .use(let token):
            return token
        case .fetch:
            // Unstructured, so that a caller cancelled meanwhile does not cancel the others' token.
            let task = Task { try await self.fetch() }
            inFlight = task
            return try await task.value
        case .wait:
            guard let inFlight else {
                throw WNSTokenError(reason: .unavailable, status: nil, message: "no token request in flight")
            }
            return try await inFlight.value
        case .fail:
            throw failure ?? WNSTokenError(reason: .failing, status: nil, message: "the credentials were refused")
        }
    }

    /// WNS answered 401 to a notification sent with `token`: drop it and fetch one more, or, if
    /// that was the fresh one, give up (`markFailing`; `token()` throws from then on).
    public func rejected(_ token: String, status: Int, message: String) -> WNSTokenStateMachine.RejectionAction {
        let action = machine.rejected(token)
        switch action {
        case .retryWithNewToken:
            break
        case .markFailing:
            if failure == nil {
                failure = WNSTokenError(reason: .failing, status: status, message: "WNS refused a freshly fetched access token: \(message)")
            }
        }
        return action
    }

    /// WNS accepted a notification sent with `token`.
    public func accepted(_ token: String) {
        machine.accepted(token)
    }

    private func fetch() async throws -> String {
        defer { inFlight = nil }
        exchanges += 1
        do {
            let grant = try await exchange()
            machine.fetched(grant.accessToken, expiresIn: grant.expiresIn)
            return grant.accessToken
        } catch let error as WNSTokenError where error.meansCredentialsRejected {
            machine.fetchRefused()
            failure = error
            throw error
        } catch {
            machine.fetchFailed()
            throw error
        }
    }

    // MARK: The request over HTTP

    static func exchange(_ credentials: WNSCredentials, at tokenEndpoint: String, httpClient: HTTPClient, now: () -> Int64) async throws
        -> Grant
    {
        var request = HTTPClientRequest(url: tokenEndpoint)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: form(credentials)))
        let response = try await httpClient.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)))?.objectValue ?? [:]
        if status == 200 {
            guard let accessToken = json["access_token"]?.stringValue, !accessToken.isEmpty else {
                throw WNSTokenError(reason: .unavailable, status: status, message: "the token endpoint's answer holds no access_token")
            }
            let expiresIn = seconds(json["expires_in"]) ?? assumedLifetime
            return Grant(accessToken: accessToken, expiresIn: max(1, expiresIn))
        }
        let error = json["error"]?.stringValue
        let description = json["error_description"]?.stringValue ?? error ?? "HTTP \(status)"
        if (400..<500).contains(status), status != 408, status != 429 {
            throw WNSTokenError(reason: .refused(error ?? "HTTP \(status)"), status: status, message: description)
        }
        throw WNSTokenError(
            reason: .unavailable, status: status, message: description,
            retryAfter: RetryAfter.seconds(response.headers.first(name: "retry-after"), now: now()))
    }

    /// The client-credentials request body (every value form-encoded).
    static func form(_ credentials: WNSCredentials) -> String {
        [
            ("grant_type", "client_credentials"), ("client_id", credentials.clientID), ("client_secret", credentials.clientSecret),
            ("scope", scope),
        ].map { "\($0)=\(formEncoded($1))" }.joined(separator: "&")
    }

    private static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let seconds)?: seconds
        case .double(let seconds)?: Int64(seconds)
        case .string(let text)?: Int64(text)
        case .null?, .bool?, .array?, .object?, nil: nil
        }
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters percent-encoded.
    static func formEncoded(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xf, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
