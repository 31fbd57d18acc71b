import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore

/// OAuth2 access tokens for one service account: exchanges a signed assertion at the account's
/// `token_uri`, caches the token and renews it five minutes before it expires, with at most one
/// exchange in flight however many senders ask (`FCMTokenStateMachine` decides; this actor
/// does the I/O).
public actor FCMAccessTokenProvider {
    /// What the token endpoint granted.
    struct Grant: Sendable {
        var accessToken: String
        /// Seconds from the request.
        var expiresIn: Int64
    }

    /// Exchanges an assertion for a grant; throws `FCMTokenError` for an answer that is not one.
    typealias Exchange = @Sendable (_ assertion: String) async throws -> Grant

    private let signer: FCMAssertionSigner
    private let exchange: Exchange
    private let now: @Sendable () -> Int64
    private var machine = FCMTokenStateMachine()
    /// The exchange in flight, awaited by every caller that needs a token meanwhile.
    private var inFlight: Task<String, any Error>?
    /// Why the credentials are failing, once they are.
    private var failure: FCMTokenError?
    /// How many exchanges were started (for tests and metrics).
    public private(set) var exchanges = 0

    /// - Parameters:
    ///   - httpClient: the client to reach `credentials.tokenURI` with.
    ///   - now: the clock, epoch seconds.
    public init(
        credentials: FCMCredentials, httpClient: HTTPClient,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) throws {
        let tokenURI = credentials.tokenURI
        try self.init(credentials: credentials, now: now) { assertion in
            try await Self.exchange(assertion, at: tokenURI, httpClient: httpClient, now: now)
        }
    }

    init(credentials: FCMCredentials, now: @escaping @Sendable () -> Int64, exchange: @escaping Exchange) throws {
        self.signer = try FCMAssertionSigner(credentials: credentials)
        self.now = now
        self.exchange = exchange
    }

    /// A token to send with: the cached one, or the one a (shared) exchange brings.
    ///
    /// Throws `FCMTokenError` when the endpoint refuses or fails, or the credentials are failing;
    /// network errors as they come.
    public func token() async throws -> String {
        switch machine.nextToken(now: now()) {
        case .use(let token):
            return token
        case .fetch(let issuedAt):
            let task = Task { try await self.fetch(issuedAt: issuedAt) }
            inFlight = task
            return try await task.value
        case .wait:
            guard let inFlight else {
                throw FCMTokenError(reason: .unavailable, status: nil, message: "no exchange in flight")
            }
            return try await inFlight.value
        case .fail:
            throw failure ?? FCMTokenError(reason: .failing, status: nil, message: "the credentials were refused")
        }
    }

    /// FCM answered 401 to a request sent with `token`: drop it and fetch one more, or, if that
    /// was the fresh one, give up (`markFailing`; `token()` throws from then on).
    public func rejected(_ token: String, status: Int, message: String) -> FCMTokenStateMachine.RejectionAction {
        let action = machine.rejected(token)
        switch action {
        case .retryWithNewToken:
            break
        case .markFailing:
            if failure == nil {
                failure = FCMTokenError(
                    reason: .failing, status: status, message: "FCM refused a freshly fetched access token: \(message)")
            }
        }
        return action
    }

    /// FCM accepted a request sent with `token`.
    public func accepted(_ token: String) {
        machine.accepted(token)
    }

    private func fetch(issuedAt: Int64) async throws -> String {
        defer { inFlight = nil }
        exchanges += 1
        do {
            let grant = try await exchange(try signer.assertion(issuedAt: issuedAt))
            machine.fetched(grant.accessToken, expiresAt: issuedAt + grant.expiresIn)
            return grant.accessToken
        } catch let error as FCMTokenError where error.meansCredentialsRejected {
            machine.fetchRefused()
            failure = error
            throw error
        } catch {
            machine.fetchFailed()
            throw error
        }
    }

    // MARK: The exchange over HTTP

    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static func exchange(_ assertion: String, at tokenURI: String, httpClient: HTTPClient, now: () -> Int64) async throws -> Grant {
        var request = HTTPClientRequest(url: tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        let form = "grant_type=\(formEncoded(grantType))&assertion=\(formEncoded(assertion))"
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await httpClient.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)))?.objectValue ?? [:]
        if status == 200 {
            guard let accessToken = json["access_token"]?.stringValue, !accessToken.isEmpty,
                let expiresIn = Self.seconds(json["expires_in"]), expiresIn > 0
            else {
                throw FCMTokenError(reason: .unavailable, status: status, message: "the token endpoint's answer holds no access_token and expires_in")
            }
            return Grant(accessToken: accessToken, expiresIn: expiresIn)
        }
        let error = json["error"]?.stringValue
        let description = json["error_description"]?.stringValue ?? error ?? "HTTP \(status)"
        if (400..<500).contains(status), status != 408, status != 429 {
            throw FCMTokenError(reason: .refused(error ?? "HTTP \(status)"), status: status, message: description)
        }
        throw FCMTokenError(
            reason: .unavailable, status: status, message: description,
            retryAfter: RetryAfter.seconds(response.headers.first(name: "retry-after"), now: now()))
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
