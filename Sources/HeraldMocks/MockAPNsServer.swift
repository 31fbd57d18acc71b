import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 + TLS server that answers like APNs (Apple's "Handling notification responses
/// from APNs"): it checks the path, headers, provider token and payload as Apple does, answers
/// with Apple's status codes and reasons, records what it accepted, and injects faults on demand
/// (unregistered tokens, 429s, 503 bursts, GOAWAY, dropped connections, slow answers).
package final class MockAPNsServer: Sendable {
    /// A notification the mock accepted.
    package struct Received: Sendable, Equatable {
        package var deviceToken: String
        package var headers: [String: String]
        package var payload: [UInt8]
    }

    /// How the mock treats requests. Every field may be changed while the mock runs (`update`);
    /// the stream-limit fields apply to the connections opened after the change.
    package struct Behavior: Sendable {
        /// Provider-token signing keys by key id; a token signed otherwise is `InvalidProviderToken`.
        package var signingKeys: [String: P256.Signing.PublicKey] = [:]
        /// Accept any well-formed, fresh ES256 token whatever key signed it (when no keys are known).
        package var acceptAnySigningKey = false
        /// Device tokens that answer `410 Unregistered`, with the time (epoch ms) Apple would report.
        package var unregistered: [String: Int64] = [:]
        /// Device tokens that get this answer (status and Apple's reason), e.g. `400 BadTopic`.
        package var rejected: [String: Rejection] = [:]
        /// The next this-many notifications that would be accepted answer `503 ServiceUnavailable`.
        package var serviceUnavailable = 0
        /// Device tokens that always answer `429 TooManyRequests`.
        package var throttled: Set<String> = []
        /// Keep every accepted notification (`received`); a benchmark turns this off and keeps
        /// only the count and arrival times.
        package var recordsNotifications = true
        /// When this many requests have arrived on a connection, the mock sends GOAWAY (`NO_ERROR`)
        /// naming the last stream opened by then: the streams up to it are answered, the client's
        /// later ones are refused (never processed), and the connection closes once its last
        /// answered stream is done. 0: never.
        package var goAwayAfterStreams = 0
        /// When a connection has brought this many requests, the mock closes its TCP connection
        /// abruptly (a reset: no TLS close, no GOAWAY) instead of answering the last one. That one
        /// and any others still in flight on the connection lose their answers, although the mock
        /// recorded those it accepted. 0: never.
        package var dropConnectionAfterRequests = 0
        /// How many connections, at most, `dropConnectionAfterRequests` drops; later ones are
        /// answered normally (a provider that resets a few connections, then recovers).
        package var connectionsToDrop = Int.max
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` of an authenticated connection.
        package var maxConcurrentStreams = 1000
        /// Apple's behaviour with token auth: a new connection allows one stream at a time until a
        /// request carries a valid provider token; then a SETTINGS frame raises the limit to
        /// `maxConcurrentStreams`. Without it (or with certificate auth, where the TLS handshake
        /// authenticated the connection) connections start at `maxConcurrentStreams`.
        package var oneStreamUntilAuthenticated = true
        /// Which of Apple's environments the mock plays: the sandbox (development) answers each
        /// accepted notification with an `apns-unique-id` (for Apple's delivery log), production
        /// does not.
        package var environment: APNsEnvironment = .sandbox
        /// Whether swift-nio-http2 checks each connection's header blocks against RFC 9113 §8.2
        /// (field names and values, pseudo-headers), as Apple's front end does. The APNs rules
        /// (topic, push type, token, payload) are checked either way. A benchmark turns this off:
        /// it is about a tenth of the mock's CPU, which stands for Apple's machines, not this one.
        /// Applies to the connections opened after a change.
        package var validatesHeaderBlocks = true
        /// How long each answer waits after the request has arrived (keeps requests in flight).
        package var responseDelay: Duration = .zero
        /// Provider tokens (the JWT, without `bearer `) answered `403` with this reason, e.g.
        /// `ExpiredProviderToken`, however valid they are: a token Apple stopped accepting.
        package var refusedProviderTokens: [String: String] = [:]
        /// The mock's clock (read in epoch seconds, as JWTs count), to judge provider-token age.
        package var clock: EpochClock = .system

        package init() {}
    }

    /// A canned refusal: an HTTP status with Apple's reason.
    package struct Rejection: Sendable, Equatable {
        package var status: Int
        package var reason: String
        /// For 410: when the token stopped being valid (epoch ms).
        package var timestamp: Int64?
        /// How many requests get this answer before the token is accepted again (nil: all).
        package var times: Int?

        package init(status: Int, reason: String, timestamp: Int64? = nil, times: Int? = nil) {
            self.status = status
            self.reason = reason
            self.timestamp = timestamp
            self.times = times
        }
    }

    /// What happened on the wire, for tests to check that a fault really occurred.
    package struct Statistics: Sendable, Equatable {
        /// TCP connections accepted.
        package var connections = 0
        /// Requests that reached the end of their body (whatever the mock then did with them).
        package var requests = 0
        /// Answers written (any status).
        package var answered = 0
        /// GOAWAY frames sent.
        package var goAways = 0
        /// Connections closed abruptly (`dropConnectionAfterRequests`).
        package var droppedConnections = 0
        /// SETTINGS frames that raised a connection's stream limit after its first valid token.
        package var streamLimitRaises = 0
        /// The most streams open at once on one connection while its limit was still 1.
        package var peakStreamsBeforeRaise = 0
        /// The most streams open at once on one connection.
        package var peakStreams = 0
        /// Connections that have had more than one stream open at once.
        package var concurrentConnections = 0

        package init() {}
    }

    private let tls: MockTLS
    /// Set for certificate-based auth: clients must present a certificate these roots sign.
    private let clientCertificateRoots: [NIOSSLCertificate]?
    private let group: MultiThreadedEventLoopGroup
    private let state: Mutex<State>

    private struct State {
        var behavior: Behavior
        var received: [Received] = []
        var statistics = Statistics()
        /// Provider tokens whose signature checked out, with their issue time: like Apple, the mock
        /// verifies a token once, not on every request (ECDSA costs milliseconds in a debug build).
        var verifiedTokens: [String: Int64] = [:]
        /// Every distinct provider token presented (the JWT), in the order first seen.
        var providerTokens: [String] = []
        var seenProviderTokens: Set<String> = []
        /// `apns-unique-id`s: a random prefix drawn once and a count (a fresh `UUID()` per
        /// answer read the system's random source every time).
        var uniqueIDs = UniqueIDs()
        var channel: (any Channel)?
    }

    /// - Parameter clientCertificateRoots: for certificate-based auth, the roots client
    ///   certificates must chain to; connections without one are refused, as Apple's are, and
    ///   requests need no provider token.
    package init(tls: MockTLS, behavior: Behavior = Behavior(), clientCertificateRoots: [NIOSSLCertificate]? = nil, threads: Int = 1) {
        self.tls = tls
        self.clientCertificateRoots = clientCertificateRoots
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.state = Mutex(State(behavior: behavior))
    }

    /// Starts listening on `host:port` (0 picks a free port) and returns the port.
    package func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let context = try tls.serverContext(alpn: ["h2"], clientCertificateRoots: clientCertificateRoots)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try self.configure(channel, tls: context)
                }
            }
            .bind(host: host, port: port).get()
        state.withLock { $0.channel = channel }
        guard let port = channel.localAddress?.port else {
            throw MockServerError(message: "the mock APNs server has no port")
        }
        return port
    }

    /// One connection's pipeline: TLS, HTTP/2, and the connection's own handler, which answers
    /// the requests from their frames (see `MockAPNsConnection`).
    private func configure(_ channel: any Channel, tls: NIOSSLContext) throws {
        let behavior = self.behavior
        let maximum = max(1, behavior.maxConcurrentStreams)
        let startsAtOne = clientCertificateRoots == nil && behavior.oneStreamUntilAuthenticated && maximum > 1
        record { $0.connections += 1 }
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(NIOSSLServerHandler(context: tls))
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: startsAtOne ? 1 : maximum),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        connectionConfiguration.headerBlockValidation = behavior.validatesHeaderBlocks ? .enabled : .disabled
        try operations.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration))
        try operations.addHandler(MockAPNsConnection(server: self, raiseTo: startsAtOne ? maximum : nil))
    }

    package func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    /// What was accepted so far.
    package var received: [Received] { state.withLock { $0.received } }

    /// How many notifications were accepted so far, and when each arrived.
    package let arrivals = ArrivalLog()

    /// What happened on the wire so far.
    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// The distinct provider tokens (JWTs) requests have presented so far, valid or not, in the
    /// order first seen: several processes sharing one token show one.
    package var providerTokens: [String] { state.withLock { $0.providerTokens } }

    /// The behavior now.
    package var behavior: Behavior { state.withLock { $0.behavior } }

    /// Changes the behavior while running.
    package func update(_ change: (inout Behavior) -> Void) {
        state.withLock {
            change(&$0.behavior)
            // The keys may have changed.
            $0.verifiedTokens = [:]
        }
    }

    // MARK: Answering

    /// Ids shaped like UUIDs, unique within this mock: a random prefix and a count in its last
    /// twelve hex digits.
    struct UniqueIDs {
        private let prefix = Array(UUID().lowercasedString.utf8.prefix(24))
        private var count: UInt64 = 0

        mutating func next() -> String {
            count += 1
            let count = count
            return String(unsafeUninitializedCapacity: 36) { buffer in
                _ = buffer.initialize(from: prefix)
                for index in 0..<12 {
                    buffer[24 + index] = Hex.digit(UInt8(truncatingIfNeeded: count >> (4 * (11 - index))) & 0x0f)
                }
                return 36
            }
        }
    }

    private func nextUniqueID() -> String {
        state.withLock { $0.uniqueIDs.next() }
    }

    struct Answer {
        var status: HTTPResponseStatus
        var reason: String?
        var timestamp: Int64?
        var apnsID: String
        /// An accepted notification's `apns-unique-id` (sandbox only).
        var uniqueID: String?
        /// The request carried a valid provider token.
        var authenticated = false
    }

    func record(_ change: (inout Statistics) -> Void) {
        state.withLock { change(&$0.statistics) }
    }

    /// Whether a connection that brought `dropConnectionAfterRequests` requests is dropped
    /// (counts `connectionsToDrop` down).
    func takeConnectionDrop() -> Bool {
        state.withLock { $0.behavior.connectionsToDrop.takeFault() }
    }

    /// The answer to one request, judged by `behavior` (the caller's snapshot of it).
    func answer(headers: HPACKHeaders, body: ByteBuffer, behavior: Behavior) -> Answer {
        let apnsID = headers.first(name: "apns-id") ?? nextUniqueID()
        var authenticated = false
        func fail(_ status: HTTPResponseStatus, _ reason: String, timestamp: Int64? = nil) -> Answer {
            Answer(status: status, reason: reason, timestamp: timestamp, apnsID: apnsID, authenticated: authenticated)
        }
        guard headers.first(name: ":method") == "POST" else { return fail(.methodNotAllowed, "MethodNotAllowed") }
        let prefix = "/3/device/"
        guard let path = headers.first(name: ":path"), path.hasPrefix(prefix) else { return fail(.notFound, "BadPath") }
        let token = String(path.dropFirst(prefix.count))
        if let id = headers.first(name: "apns-id"), UUID(text: id) == nil { return fail(.badRequest, "BadMessageId") }
        guard let topic = headers.first(name: "apns-topic"), !topic.isEmpty else { return fail(.badRequest, "MissingTopic") }
        if let type = headers.first(name: "apns-push-type"),
            !["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk"].contains(type)
        {
            return fail(.badRequest, "InvalidPushType")
        }
        if let priority = headers.first(name: "apns-priority"), !["1", "5", "10"].contains(priority) {
            return fail(.badRequest, "BadPriority")
        }
        if let expiration = headers.first(name: "apns-expiration"), Int64(expiration) == nil {
            return fail(.badRequest, "BadExpirationDate")
        }
        if let collapse = headers.first(name: "apns-collapse-id"), collapse.utf8.count > 64 {
            return fail(.badRequest, "BadCollapseId")
        }
        // Token-based authentication, unless the TLS handshake already checked a client certificate.
        if clientCertificateRoots == nil {
            guard let authorization = headers.first(name: "authorization") else {
                return fail(.forbidden, "MissingProviderToken")
            }
            // Keyed by the whole header value: a known one skips the parsing too.
            var issuedAt = state.withLock { $0.verifiedTokens[authorization] }
            if issuedAt == nil {
                let parts = authorization.split(separator: " ")
                guard parts.count == 2, parts[0].lowercased() == "bearer" else { return fail(.forbidden, "InvalidProviderToken") }
                // Recorded on first sight only: a verified token is not parsed again.
                state.withLock { state in
                    if state.seenProviderTokens.insert(String(parts[1])).inserted { state.providerTokens.append(String(parts[1])) }
                }
                issuedAt = Self.verifiedIssueTime(jwt: String(parts[1]), keys: behavior.signingKeys, anyKey: behavior.acceptAnySigningKey)
                if let issuedAt {
                    state.withLock {
                        if $0.verifiedTokens.count >= 64 { $0.verifiedTokens = [:] }
                        $0.verifiedTokens[authorization] = issuedAt
                    }
                }
            }
            guard let issuedAt else { return fail(.forbidden, "InvalidProviderToken") }
            // Apple refuses tokens older than an hour.
            guard behavior.clock.now.epochSeconds - issuedAt <= 3600 else { return fail(.forbidden, "ExpiredProviderToken") }
            if !behavior.refusedProviderTokens.isEmpty,
                let reason = behavior.refusedProviderTokens[String(authorization.dropFirst("bearer ".count))]
            {
                return fail(.forbidden, reason)
            }
            authenticated = true
        }
        guard token.utf8.count >= 64, token.utf8.count % 2 == 0, Hex.decode(token) != nil else {
            return fail(.badRequest, "BadDeviceToken")
        }
        guard body.readableBytes > 0 else { return fail(.badRequest, "PayloadEmpty") }
        guard body.readableBytes <= APNsRenderer.maximumPayloadBytes else { return fail(.payloadTooLarge, "PayloadTooLarge") }
        if let timestamp = behavior.unregistered[token] { return fail(.gone, "Unregistered", timestamp: timestamp) }
        let rejection = state.withLock { state -> Rejection? in
            guard let rejection = state.behavior.rejected[token] else { return nil }
            if let times = rejection.times {
                state.behavior.rejected[token]?.times = times - 1
                if times <= 1 { state.behavior.rejected[token] = nil }
                if times <= 0 { return nil }
            }
            return rejection
        }
        if let rejection {
            return fail(HTTPResponseStatus(statusCode: rejection.status), rejection.reason, timestamp: rejection.timestamp)
        }
        if behavior.throttled.contains(token) { return fail(.tooManyRequests, "TooManyRequests") }
        let unavailable = state.withLock { $0.behavior.serviceUnavailable.takeFault() }
        if unavailable { return fail(.serviceUnavailable, "ServiceUnavailable") }

        if behavior.recordsNotifications {
            var fields: [String: String] = [:]
            for (name, value, _) in headers where !name.hasPrefix(":") { fields[name.lowercased()] = value }
            let received = Received(deviceToken: token, headers: fields, payload: Array(body.readableBytesView))
            // Under one lock, so that `received` and `arrivals` stay in the same order.
            state.withLock {
                arrivals.record()
                $0.received.append(received)
            }
        } else {
            arrivals.record()
        }
        var answer = Answer(status: .ok, reason: nil, timestamp: nil, apnsID: apnsID, authenticated: authenticated)
        if behavior.environment == .sandbox { answer.uniqueID = nextUniqueID() }
        return answer
    }

    /// Checks an ES256 provider token's form and signature as APNs does (a known key id, or any
    /// key with `anyKey`); returns its issue time (epoch seconds), or nil if it is not valid.
    static func verifiedIssueTime(jwt: String, keys: [String: P256.Signing.PublicKey], anyKey: Bool) -> Int64? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", let kid = header["kid"] as? String,
            claims["iss"] is String, let issuedAt = (claims["iat"] as? NSNumber)?.int64Value,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        if let key = keys[kid] {
            guard key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)) else { return nil }
        } else if !anyKey {
            return nil
        }
        return issuedAt
    }
}

/// A mock server could not start.
package struct MockServerError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
