import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import _CryptoExtras

/// An HTTP/2 (and HTTP/1.1) + TLS server that plays both Google parts FCM senders talk to:
///
/// - `POST /token`, the OAuth2 token endpoint of a service account's `token_uri`: it verifies
///   the RS256 assertion (signature by a known account's key, `aud` = this endpoint's URL, the
///   FCM scope, `exp` at most an hour after `iat` and not past) and issues an access token with
///   `expires_in`;
/// - `POST /v1/projects/{project}/messages:send`, FCM's HTTP v1 API: it checks the bearer token
///   is one it issued, unexpired and for that project, and the message's shape (exactly one of
///   `token`/`topic`/`condition`, string data values, no reserved data keys, at most 4096 data
///   bytes, a duration `ttl`), then answers with Google's error shape and codes, or 200 and the
///   message name, recording what it accepted.
///
/// Faults can be injected: unregistered tokens, sender-id mismatches, 429/503/500 bursts with
/// `Retry-After`, and refused access tokens (to make a client refresh).
package final class MockFCMServer: Sendable {
    /// A service account the token endpoint knows.
    package struct Account: Sendable {
        package var clientEmail: String
        package var projectID: String
        package var publicKey: _RSA.Signing.PublicKey

        package init(clientEmail: String, projectID: String, publicKey: _RSA.Signing.PublicKey) {
            self.clientEmail = clientEmail
            self.projectID = projectID
            self.publicKey = publicKey
        }
    }

    /// A message the mock accepted.
    package struct Received: Sendable, Equatable {
        package var projectID: String
        /// The registration token, topic or condition the message was for.
        package var target: String
        /// The `message` object as sent.
        package var message: JSONValue
        /// The access token it came with.
        package var accessToken: String
        /// The request's HTTP version ("HTTP/2.0" for a client on HTTP/2).
        package var httpVersion: String

        /// `message.data`.
        package var data: [String: String] {
            message.objectValue?["data"]?.objectValue?.compactMapValues(\.stringValue) ?? [:]
        }

        /// A member of the message (`notification`, `android`, …).
        package subscript(_ key: String) -> JSONValue? { message.objectValue?[key] }
    }

    /// How the mock treats requests.
    package struct Behavior: Sendable {
        /// Service accounts by `client_email`; an assertion from anyone else is `invalid_grant`.
        package var accounts: [String: Account] = [:]
        /// Accept any well-formed, fresh assertion whoever signed it (when no accounts are known);
        /// its tokens may send for any project.
        package var acceptAnyAccount = false
        /// `expires_in` of the access tokens it issues (Google's are 3599).
        package var tokenLifetime: Int64 = 3599
        /// Registration tokens that answer `404 UNREGISTERED`.
        package var unregistered: Set<String> = []
        /// Registration tokens of another sender: `403 SENDER_ID_MISMATCH`.
        package var senderIDMismatch: Set<String> = []
        /// Registration tokens whose APNs/web credentials Firebase cannot use: `401 THIRD_PARTY_AUTH_ERROR`.
        package var thirdPartyAuthError: Set<String> = []
        /// The next this-many sends that would be accepted answer `429 QUOTA_EXCEEDED`.
        package var quotaExceeded = 0
        /// The next this-many sends that would be accepted answer `503 UNAVAILABLE`.
        package var unavailable = 0
        /// The next this-many sends that would be accepted answer `500 INTERNAL`.
        package var internalErrors = 0
        /// `Retry-After` (seconds) sent with 429 and 503, when set.
        package var retryAfter: Int?
        /// The next this-many sends with a valid access token answer `401 UNAUTHENTICATED` and
        /// revoke that token, as Google does with a revoked one.
        package var rejectAccessTokens = 0
        /// The next this-many token requests answer `503`.
        package var tokenEndpointUnavailable = 0
        /// The mock's clock (read in epoch seconds, as JWTs count): assertion times and access-token expiry.
        package var clock: EpochClock = .system
        /// Keep each accepted message in `received`; a benchmark turns it off and reads `arrivals`.
        package var recordsMessages = true

        package init() {}
    }

    struct Issued {
        var projectID: String?
        var expiresAt: Int64
    }

    private struct State {
        var behavior: Behavior
        var received: [Received] = []
        var issued: [String: Issued] = [:]
        var tokenRequests = 0
        var channel: (any Channel)?
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
    /// - Parameter protocols: what it offers in ALPN (`["http/1.1"]`: an endpoint without HTTP/2).
    package func start(host: String = "127.0.0.1", port: Int = 0, protocols: [String] = ["h2", "http/1.1"]) async throws -> Int {
        let (channel, bound) = try await MockHTTPListener.bind(
            group: group, tls: tls, protocols: protocols, host: host, port: port
        ) { [self] head, body in answer(head: head, body: body).response }
        state.withLock { $0.channel = channel }
        return bound
    }

    /// Stops listening and closes the connections.
    package func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    /// What was accepted so far.
    package var received: [Received] { state.withLock { $0.received } }

    /// How many messages were accepted so far (validate-only ones aside), and when each arrived.
    package let arrivals = ArrivalLog()

    /// How many requests reached the token endpoint.
    package var tokenRequests: Int { state.withLock { $0.tokenRequests } }

    /// Changes the behavior while running.
    package func update(_ change: (inout Behavior) -> Void) {
        state.withLock { change(&$0.behavior) }
    }

    // MARK: Answering

    struct Answer {
        var status: HTTPResponseStatus
        var json: JSONValue
        var retryAfter: Int?

        var response: MockHTTPResponse {
            var headers = [("content-type", "application/json; charset=UTF-8")]
            if let retryAfter { headers.append(("retry-after", String(retryAfter))) }
            return MockHTTPResponse(status: status, headers: headers, body: ByteBuffer(string: json.jsonText))
        }
    }

    func answer(head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        if path == "/token" {
            guard head.method == .POST else { return Self.oauthError(.methodNotAllowed, "invalid_request", "use POST") }
            return token(head: head, body: body)
        }
        let prefix = "/v1/projects/"
        let suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return Self.googleError(.notFound, "NOT_FOUND", "the mock FCM serves /token and /v1/projects/{project}/messages:send")
        }
        let projectID = String(path.dropFirst(prefix.count).dropLast(suffix.count))
        guard !projectID.contains("/") else {
            return Self.googleError(.notFound, "NOT_FOUND", "no such resource: \(path)")
        }
        guard head.method == .POST else { return Self.googleError(.methodNotAllowed, "INVALID_ARGUMENT", "messages:send takes POST") }
        return send(projectID: projectID, head: head, body: body)
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
        let form = Self.formFields(String(decoding: body.readableBytesView, as: UTF8.self))
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return Self.oauthError(.badRequest, "unsupported_grant_type", "grant_type must be urn:ietf:params:oauth:grant-type:jwt-bearer")
        }
        guard let assertion = form["assertion"] else {
            return Self.oauthError(.badRequest, "invalid_request", "the assertion is missing")
        }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = (try? JSONDecoder().decode(JSONValue.self, from: Data(headerBytes)))?.objectValue,
            let claims = (try? JSONDecoder().decode(JSONValue.self, from: Data(claimsBytes)))?.objectValue
        else {
            return Self.oauthError(.badRequest, "invalid_grant", "the assertion is not a JWT")
        }
        guard header["alg"]?.stringValue == "RS256" else {
            return Self.oauthError(.badRequest, "invalid_grant", "the assertion must be signed RS256")
        }
        guard let issuer = claims["iss"]?.stringValue, case .int(let issuedAt)? = claims["iat"], case .int(let expiry)? = claims["exp"]
        else {
            return Self.oauthError(.badRequest, "invalid_grant", "the assertion needs iss, iat and exp")
        }
        var projectID: String?
        if let account = behavior.accounts[issuer] {
            let signed = account.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: Array((parts[0] + "." + parts[1]).utf8),
                padding: .insecurePKCS1v1_5)
            guard signed else { return Self.oauthError(.badRequest, "invalid_grant", "the assertion's signature does not verify") }
            projectID = account.projectID
        } else if !behavior.acceptAnyAccount {
            return Self.oauthError(.badRequest, "invalid_grant", "no service account \(issuer)")
        }
        let authority = head.headers.first(name: "host") ?? ""
        guard claims["aud"]?.stringValue == "https://\(authority)/token" else {
            return Self.oauthError(.badRequest, "invalid_grant", "aud must be this token endpoint, https://\(authority)/token")
        }
        let now = behavior.clock.now.epochSeconds
        guard expiry - issuedAt <= 3600, expiry > now, issuedAt <= now + 300 else {
            return Self.oauthError(
                .badRequest, "invalid_grant", "the assertion must expire at most an hour after iat, and not be expired or from the future")
        }
        let scopes = (claims["scope"]?.stringValue ?? "").split(separator: " ")
        guard scopes.contains("https://www.googleapis.com/auth/firebase.messaging") else {
            return Self.oauthError(
                .badRequest, "invalid_scope", "the scope must include https://www.googleapis.com/auth/firebase.messaging")
        }
        let accessToken = "ya29.mock-" + Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        state.withLock { $0.issued[accessToken] = Issued(projectID: projectID, expiresAt: now + behavior.tokenLifetime) }
        return Answer(
            status: .ok,
            json: .object([
                "access_token": .string(accessToken), "expires_in": .int(behavior.tokenLifetime), "token_type": .string("Bearer"),
            ]))
    }

    // MARK: messages:send

    private func send(projectID: String, head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        let behavior = state.withLock { $0.behavior }
        let parts = head.headers.first(name: "authorization")?.split(separator: " ", maxSplits: 1) ?? []
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return Self.googleError(.unauthorized, "UNAUTHENTICATED", "the request has no OAuth2 access token")
        }
        let accessToken = String(parts[1])
        // Checked and, when told to, revoked in one step, so concurrent requests agree.
        let authorization = state.withLock { state -> Answer? in
            guard let issued = state.issued[accessToken], issued.expiresAt > behavior.clock.now.epochSeconds else {
                return Self.googleError(.unauthorized, "UNAUTHENTICATED", "the access token is invalid or expired")
            }
            if state.behavior.rejectAccessTokens > 0 {
                state.behavior.rejectAccessTokens -= 1
                state.issued[accessToken] = nil
                return Self.googleError(.unauthorized, "UNAUTHENTICATED", "the access token was revoked")
            }
            if let allowed = issued.projectID, allowed != projectID {
                return Self.googleError(.forbidden, "PERMISSION_DENIED", "the service account may not send for project \(projectID)")
            }
            return nil
        }
        if let authorization { return authorization }

        guard let request = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)))?.objectValue else {
            return Self.googleError(.badRequest, "INVALID_ARGUMENT", "the body is not a JSON object")
        }
        for key in request.keys where !["message", "validate_only", "validateOnly"].contains(key) {
            return Self.badField(key, "unknown field \"\(key)\"")
        }
        guard let message = request["message"]?.objectValue else {
            return Self.badField("message", "the message is missing")
        }
        if let problem = Self.check(message) { return problem }
        let target = message["token"]?.stringValue ?? message["topic"]?.stringValue ?? message["condition"]?.stringValue ?? ""
        if let token = message["token"]?.stringValue, !Self.looksLikeRegistrationToken(token) {
            return Self.googleError(
                .badRequest, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                fcmError: "INVALID_ARGUMENT")
        }

        enum Fault { case quota, unavailable, internalError }
        let fault = state.withLock { state -> Fault? in
            if state.behavior.quotaExceeded.takeFault() { return .quota }
            if state.behavior.unavailable.takeFault() { return .unavailable }
            if state.behavior.internalErrors.takeFault() { return .internalError }
            return nil
        }
        switch fault {
        case .quota?:
            var answer = Self.googleError(
                .tooManyRequests, "RESOURCE_EXHAUSTED", "the sending quota is exceeded", fcmError: "QUOTA_EXCEEDED")
            answer.retryAfter = behavior.retryAfter
            return answer
        case .unavailable?:
            var answer = Self.googleError(.serviceUnavailable, "UNAVAILABLE", "the service is unavailable", fcmError: "UNAVAILABLE")
            answer.retryAfter = behavior.retryAfter
            return answer
        case .internalError?:
            return Self.googleError(.internalServerError, "INTERNAL", "internal error", fcmError: "INTERNAL")
        case nil:
            break
        }
        if behavior.unregistered.contains(target) {
            return Self.googleError(.notFound, "NOT_FOUND", "Requested entity was not found.", fcmError: "UNREGISTERED")
        }
        if behavior.senderIDMismatch.contains(target) {
            return Self.googleError(.forbidden, "PERMISSION_DENIED", "SenderId mismatch", fcmError: "SENDER_ID_MISMATCH")
        }
        if behavior.thirdPartyAuthError.contains(target) {
            return Self.googleError(
                .unauthorized, "UNAUTHENTICATED", "the app's APNs or web push credentials were refused", fcmError: "THIRD_PARTY_AUTH_ERROR")
        }

        let messageID =
            "0:\(UInt64.random(in: 1_000_000_000_000...9_999_999_999_999))%\(Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) }))"
        let validateOnly = request["validate_only"] == .bool(true) || request["validateOnly"] == .bool(true)
        if !validateOnly {
            arrivals.record()
        }
        if !validateOnly && behavior.recordsMessages {
            let received = Received(
                projectID: projectID, target: target, message: .object(message), accessToken: accessToken,
                httpVersion: "\(head.version)")
            state.withLock { $0.received.append(received) }
        }
        return Answer(status: .ok, json: .object(["name": .string("projects/\(projectID)/messages/\(messageID)")]))
    }

    /// The message's shape, as FCM checks it; nil when it is good.
    static func check(_ message: [String: JSONValue]) -> Answer? {
        let known: Set<String> = [
            "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions", "token", "topic", "condition",
        ]
        for key in message.keys.sorted() where !known.contains(key) {
            return badField("message", "unknown field \"\(key)\" in message")
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            return badField("message", "a message needs exactly one of token, topic and condition, not \(targets.count)")
        }
        guard message[targets[0]]?.stringValue != nil else { return badField("message.\(targets[0])", "must be a string") }
        if let problem = checkData(message["data"], field: "message.data") { return problem }
        switch message["notification"] {
        case nil: break
        case .object(let fields)?:
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                guard ["title", "body", "image"].contains(key) else { return badField("message.notification", "unknown field \"\(key)\"") }
                guard value.stringValue != nil else { return badField("message.notification.\(key)", "must be a string") }
            }
        default: return badField("message.notification", "must be an object")
        }
        switch message["android"] {
        case nil: break
        case .object(let android)?:
            let knownAndroid: Set<String> = [
                "collapse_key", "collapseKey", "priority", "ttl", "restricted_package_name", "restrictedPackageName", "data",
                "notification", "fcm_options", "fcmOptions", "direct_boot_ok", "directBootOk",
            ]
            for key in android.keys.sorted() where !knownAndroid.contains(key) {
                return badField("message.android", "unknown field \"\(key)\"")
            }
            if let priority = android["priority"] {
                guard let text = priority.stringValue, ["normal", "high"].contains(text.lowercased()) else {
                    return badField("message.android.priority", "must be normal or high")
                }
            }
            if let ttl = android["ttl"] {
                guard let text = ttl.stringValue, let seconds = durationSeconds(text), seconds <= 2_419_200 else {
                    return badField("message.android.ttl", "must be a duration in seconds such as \"3600s\", at most 4 weeks")
                }
            }
            if let problem = checkData(android["data"], field: "message.android.data") { return problem }
            if let notification = android["notification"], notification.objectValue == nil {
                return badField("message.android.notification", "must be an object")
            }
        default: return badField("message.android", "must be an object")
        }
        return nil
    }

    static func checkData(_ data: JSONValue?, field: String) -> Answer? {
        guard let data else { return nil }
        guard let members = data.objectValue else { return badField(field, "must be an object of strings") }
        var size = 0
        for (index, key) in members.keys.sorted().enumerated() {
            guard let value = members[key]?.stringValue else {
                return badField("\(field)[\(index)].value", "every data value must be a string")
            }
            let lower = key.lowercased()
            if lower == "from" || lower == "message_type" || lower.hasPrefix("google") || lower.hasPrefix("gcm") {
                return badField("\(field)[\(index)].key", "\"\(key)\" is a reserved data key")
            }
            size += key.utf8.count + value.utf8.count
        }
        if size > 4096 {
            return googleError(
                .badRequest, "INVALID_ARGUMENT", "the data payload is \(size) bytes, over the 4096-byte limit", fcmError: "INVALID_ARGUMENT"
            )
        }
        return nil
    }

    /// A protobuf duration in JSON: seconds with up to nine decimals, then `s`.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let pieces = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), !pieces[0].isEmpty, pieces[0].allSatisfy(isDigit) else { return nil }
        if pieces.count == 2 {
            guard (1...9).contains(pieces[1].count), pieces[1].allSatisfy(isDigit) else { return nil }
        }
        return Double(number)
    }

    private static func isDigit(_ character: Character) -> Bool { ("0"..."9").contains(character) }

    /// FCM registration tokens are long runs of base64url characters and colons.
    static func looksLikeRegistrationToken(_ token: String) -> Bool {
        token.utf8.count >= 32
            && token.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_:".unicodeScalars.contains($0)
            }
    }

    // MARK: Answers in Google's shapes

    /// `{"error":{"code":…,"message":…,"status":…,"details":[…]}}`.
    static func googleError(_ status: HTTPResponseStatus, _ code: String, _ message: String, fcmError: String? = nil) -> Answer {
        var error: [String: JSONValue] = [
            "code": .int(Int64(status.code)), "message": .string(message), "status": .string(code),
        ]
        if let fcmError {
            error["details"] = .array([
                .object(["@type": .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"), "errorCode": .string(fcmError)])
            ])
        }
        return Answer(status: status, json: .object(["error": .object(error)]))
    }

    /// A 400 `INVALID_ARGUMENT` naming the bad field (a `google.rpc.BadRequest` detail).
    static func badField(_ field: String, _ description: String) -> Answer {
        let violation = JSONValue.object(["field": .string(field), "description": .string(description)])
        let error: [String: JSONValue] = [
            "code": .int(400), "message": .string("Invalid value at '\(field)': \(description)"),
            "status": .string("INVALID_ARGUMENT"),
            "details": .array([
                .object(["@type": .string("type.googleapis.com/google.rpc.BadRequest"), "fieldViolations": .array([violation])])
            ]),
        ]
        return Answer(status: .badRequest, json: .object(["error": .object(error)]))
    }

    /// An OAuth2 error answer (RFC 6749 §5.2).
    static func oauthError(_ status: HTTPResponseStatus, _ error: String, _ description: String) -> Answer {
        Answer(status: status, json: .object(["error": .string(error), "error_description": .string(description)]))
    }

    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}
