import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 + TLS server that answers like APNs (Apple's "Handling notification responses
/// from APNs"): it checks the path, headers, provider token and payload as Apple does, answers
/// with Apple's status codes and reasons, records what it accepted, and can be told to reject
/// tokens as unregistered.
public final class MockAPNsServer: Sendable {
    /// A notification the mock accepted.
    public struct Received: Sendable, Equatable {
        public var deviceToken: String
        public var headers: [String: String]
        public var payload: [UInt8]
    }

    /// How the mock treats requests.
    public struct Behavior: Sendable {
        /// Provider-token signing keys by key id; a token signed otherwise is `InvalidProviderToken`.
        public var signingKeys: [String: P256.Signing.PublicKey] = [:]
        /// Accept any well-formed, fresh ES256 token whatever key signed it (when no keys are known).
        public var acceptAnySigningKey = false
        /// Device tokens that answer `410 Unregistered`, with the time (epoch ms) Apple would report.
        public var unregistered: [String: Int64] = [:]
        /// The next this-many notifications that would be accepted answer `503 ServiceUnavailable`.
        public var serviceUnavailable = 0
        /// Device tokens that always answer `429 TooManyRequests`.
        public var throttled: Set<String> = []
        /// Keep every accepted notification (`received`); a benchmark turns this off and keeps
        /// only the count and arrival times.
        public var recordsNotifications = true
        /// The mock's clock, epoch seconds, to judge provider-token age.
        public var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

        public init() {}
    }

    private let tls: MockTLS
    /// Set for certificate-based auth: clients must present a certificate these roots sign.
    private let clientCertificateRoots: [NIOSSLCertificate]?
    private let group: MultiThreadedEventLoopGroup
    private let state: Mutex<State>

    private struct State {
        var behavior: Behavior
        var received: [Received] = []
        var acceptedCount = 0
        var arrivals: [UInt64] = []
        /// Provider tokens whose signature was checked, with their issue time: APNs verifies a
        /// token once, not on every request, and so does the mock.
        var verifiedTokens: [String: Int64] = [:]
        var channel: (any Channel)?
    }

    /// - Parameter clientCertificateRoots: for certificate-based auth, the roots client
    ///   certificates must chain to; connections without one are refused, as Apple's are, and
    ///   requests need no provider token.
    public init(tls: MockTLS, behavior: Behavior = Behavior(), clientCertificateRoots: [NIOSSLCertificate]? = nil, threads: Int = 1) {
        self.tls = tls
        self.clientCertificateRoots = clientCertificateRoots
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.state = Mutex(State(behavior: behavior))
    }

    /// Starts listening on `host:port` (0 picks a free port) and returns the port.
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let context = try tls.serverContext(alpn: ["h2"], clientCertificateRoots: clientCertificateRoots)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2Pipeline(
                    mode: .server,
                    initialLocalSettings: [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                    ],
                    targetWindowSize: 1 << 20
                ) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandlers([
                            HTTP2FramePayloadToHTTP1ServerCodec(),
                            StreamHandler(server: self),
                        ])
                    }
                }.map { _ in }
            }
            .bind(host: host, port: port).get()
        state.withLock { $0.channel = channel }
        guard let port = channel.localAddress?.port else {
            throw MockServerError(message: "the mock APNs server has no port")
        }
        return port
    }

    public func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    /// What was accepted so far (when `recordsNotifications`).
    public var received: [Received] { state.withLock { $0.received } }

    /// How many notifications were accepted so far.
    public var acceptedCount: Int { state.withLock { $0.acceptedCount } }

    /// When each accepted notification arrived (`DispatchTime` uptime nanoseconds), in order.
    public var arrivalTimes: [UInt64] { state.withLock { $0.arrivals } }

    /// Changes the behavior while running.
    public func update(_ change: (inout Behavior) -> Void) {
        state.withLock {
            change(&$0.behavior)
            // The keys may have changed: judge every token afresh.
            $0.verifiedTokens.removeAll()
        }
    }

    // MARK: Answering

    struct Answer {
        var status: HTTPResponseStatus
        var reason: String?
        var timestamp: Int64?
        var apnsID: String
    }

    func answer(head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        let apnsID = head.headers.first(name: "apns-id") ?? UUID().uuidString
        func fail(_ status: HTTPResponseStatus, _ reason: String, timestamp: Int64? = nil) -> Answer {
            Answer(status: status, reason: reason, timestamp: timestamp, apnsID: apnsID)
        }
        let behavior = state.withLock { $0.behavior }
        guard head.method == .POST else { return fail(.methodNotAllowed, "MethodNotAllowed") }
        let prefix = "/3/device/"
        guard head.uri.hasPrefix(prefix) else { return fail(.notFound, "BadPath") }
        let token = String(head.uri.dropFirst(prefix.count))
        if let id = head.headers.first(name: "apns-id"), UUID(uuidString: id) == nil { return fail(.badRequest, "BadMessageId") }
        guard let topic = head.headers.first(name: "apns-topic"), !topic.isEmpty else { return fail(.badRequest, "MissingTopic") }
        if let type = head.headers.first(name: "apns-push-type"),
            !["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk"].contains(type)
        {
            return fail(.badRequest, "InvalidPushType")
        }
        if let priority = head.headers.first(name: "apns-priority"), !["1", "5", "10"].contains(priority) {
            return fail(.badRequest, "BadPriority")
        }
        if let expiration = head.headers.first(name: "apns-expiration"), Int64(expiration) == nil {
            return fail(.badRequest, "BadExpirationDate")
        }
        if let collapse = head.headers.first(name: "apns-collapse-id"), collapse.utf8.count > 64 {
            return fail(.badRequest, "BadCollapseId")
        }
        // Token-based authentication, unless the TLS handshake already checked a client certificate.
        if clientCertificateRoots == nil {
            guard let authorization = head.headers.first(name: "authorization") else {
                return fail(.forbidden, "MissingProviderToken")
            }
            let parts = authorization.split(separator: " ")
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return fail(.forbidden, "InvalidProviderToken") }
            switch verifyCached(jwt: String(parts[1]), behavior: behavior) {
            case .valid: break
            case .expired: return fail(.forbidden, "ExpiredProviderToken")
            case .invalid: return fail(.forbidden, "InvalidProviderToken")
            }
        }
        guard token.utf8.count >= 64, token.utf8.count % 2 == 0, Hex.decode(token) != nil else {
            return fail(.badRequest, "BadDeviceToken")
        }
        guard body.readableBytes > 0 else { return fail(.badRequest, "PayloadEmpty") }
        guard body.readableBytes <= APNsRenderer.maximumPayloadBytes else { return fail(.payloadTooLarge, "PayloadTooLarge") }
        if let timestamp = behavior.unregistered[token] { return fail(.gone, "Unregistered", timestamp: timestamp) }
        if behavior.throttled.contains(token) { return fail(.tooManyRequests, "TooManyRequests") }
        let unavailable = state.withLock { state -> Bool in
            guard state.behavior.serviceUnavailable > 0 else { return false }
            state.behavior.serviceUnavailable -= 1
            return true
        }
        if unavailable { return fail(.serviceUnavailable, "ServiceUnavailable") }

        let arrival = DispatchTime.now().uptimeNanoseconds
        if behavior.recordsNotifications {
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let received = Received(deviceToken: token, headers: headers, payload: Array(body.readableBytesView))
            state.withLock {
                $0.received.append(received)
                $0.acceptedCount += 1
                $0.arrivals.append(arrival)
            }
        } else {
            state.withLock {
                $0.acceptedCount += 1
                $0.arrivals.append(arrival)
            }
        }
        return Answer(status: .ok, reason: nil, timestamp: nil, apnsID: apnsID)
    }

    /// `verify`, with the signature checked once per distinct token.
    private func verifyCached(jwt: String, behavior: Behavior) -> TokenCheck {
        let now = behavior.now()
        if let issuedAt = state.withLock({ $0.verifiedTokens[jwt] }) {
            return now - issuedAt > 3600 ? .expired : .valid
        }
        let check = Self.verify(jwt: jwt, keys: behavior.signingKeys, anyKey: behavior.acceptAnySigningKey, now: now)
        if check == .valid, let issuedAt = Self.issuedAt(jwt: jwt) {
            state.withLock {
                if $0.verifiedTokens.count > 1000 { $0.verifiedTokens.removeAll() }
                $0.verifiedTokens[jwt] = issuedAt
            }
        }
        return check
    }

    private static func issuedAt(jwt: String) -> Int64? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])),
            let claims = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return nil }
        return (claims["iat"] as? NSNumber)?.int64Value
    }

    enum TokenCheck { case valid, expired, invalid }

    /// Checks an ES256 provider token as APNs does: known key id, good signature, at most an hour old.
    static func verify(jwt: String, keys: [String: P256.Signing.PublicKey], anyKey: Bool, now: Int64) -> TokenCheck {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", let kid = header["kid"] as? String,
            claims["iss"] is String, let issuedAt = (claims["iat"] as? NSNumber)?.int64Value,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return .invalid }
        if let key = keys[kid] {
            guard key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)) else { return .invalid }
        } else if !anyKey {
            return .invalid
        }
        return now - issuedAt > 3600 ? .expired : .valid
    }
}

/// A mock server could not start.
public struct MockServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Collects one HTTP/2 stream's request and writes the mock's answer.
private final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: MockAPNsServer
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(server: MockAPNsServer) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            let answer = server.answer(head: head, body: body)
            var headers = HTTPHeaders([("apns-id", answer.apnsID)])
            var responseBody: ByteBuffer?
            if let reason = answer.reason {
                var json = #"{"reason":"\#(reason)""#
                if let timestamp = answer.timestamp { json += #","timestamp":\#(timestamp)"# }
                json += "}"
                responseBody = ByteBuffer(string: json)
                headers.add(name: "content-type", value: "application/json")
                headers.add(name: "content-length", value: String(json.utf8.count))
            } else {
                headers.add(name: "apns-unique-id", value: UUID().uuidString.lowercased())
            }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: answer.status, headers: headers))), promise: nil)
            if let responseBody { context.write(wrapOutboundOut(.body(.byteBuffer(responseBody))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
