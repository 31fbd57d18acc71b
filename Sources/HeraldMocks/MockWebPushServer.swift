import Crypto
import Foundation
import HeraldCore
import HeraldWebPush
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A push service (RFC 8030) over TLS, HTTP/2 or HTTP/1.1 as the client negotiates, that also
/// plays the browser: it checks each request as a push service does — the VAPID authorization
/// (RFC 8292: signature, audience, expiry, contact), `TTL`, `Urgency`, `Topic`, the
/// `aes128gcm` content coding and the size — then decrypts the body with the subscription's
/// private key (RFC 8291) and records the plaintext, so a test proves a browser could read it.
///
/// Subscriptions are made with `subscribe(applicationServerKey:)` or `register(_:)`. Faults:
/// gone subscriptions (410), bursts of 429 and 503 with `Retry-After`.
package final class MockWebPushServer: Sendable {
    /// A message the mock accepted and decrypted.
    package struct Received: Sendable, Equatable {
        /// The subscriber's id (the endpoint's last segment).
        package var subscriptionID: String
        /// Request headers, names lower-cased.
        package var headers: [String: String]
        /// The decrypted message.
        package var plaintext: [UInt8]
        /// `HTTP/2.0` or `HTTP/1.1`.
        package var httpVersion: String

        /// The plaintext as text.
        package var text: String { String(decoding: plaintext, as: UTF8.self) }
    }

    /// How the mock treats requests.
    package struct Behavior: Sendable {
        /// Subscription ids that answer 410 Gone (unsubscribed or expired).
        package var gone: Set<String> = []
        /// The next this-many messages that would be accepted answer 429 Too Many Requests.
        package var tooManyRequests = 0
        /// The next this-many messages that would be accepted answer 503 Service Unavailable.
        package var serviceUnavailable = 0
        /// The `Retry-After` value sent with 429 and 503 (seconds or an HTTP date); nil sends none.
        package var retryAfter: String?
        /// Bodies larger than this answer 413 (RFC 8030 §7.2's minimum, what push services take).
        package var maximumBodyBytes = 4096
        /// The mock's clock (read in epoch seconds, as JWTs count), to judge VAPID expiry.
        package var clock: EpochClock = .system
        /// Called with each message accepted, on the connection's event loop (to print it, say).
        package var onReceive: (@Sendable (Received) -> Void)?
        /// Benchmark mode, when set: a subscription id the mock does not know is this subscriber
        /// (one key pair and auth secret for any number of endpoints); messages are counted in
        /// `arrivals` but not kept; each VAPID token is verified once; one message in 1,000 is
        /// decrypted (a push service does not decrypt; the sample proves the encryption).
        package var benchmarkSubscriber: MockWebPushSubscriber?

        package init() {}
    }

    private let tls: MockTLS
    private let protocols: [String]
    private let group: MultiThreadedEventLoopGroup
    private let state: Mutex<State>

    private struct State {
        var behavior: Behavior
        var subscribers: [String: MockWebPushSubscriber] = [:]
        var received: [Received] = []
        /// Benchmark mode: VAPID authorizations already verified, by audience.
        var verifiedVAPID: Set<String> = []
        var channel: (any Channel)?
        var port: Int?
    }

    /// - Parameter protocols: the ALPN protocols offered: `h2` and `http/1.1` by default; one
    ///   of them alone to force a client onto it.
    package init(tls: MockTLS, behavior: Behavior = Behavior(), protocols: [String] = ["h2", "http/1.1"], threads: Int = 1) {
        self.tls = tls
        self.protocols = protocols
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.state = Mutex(State(behavior: behavior))
    }

    /// Starts listening on `host:port` (0 picks a free port) and returns the port.
    package func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let (channel, bound) = try await MockHTTPListener.bind(
            group: group, tls: tls, protocols: protocols, host: host, port: port
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

    /// Makes a subscription (a new key pair and auth secret), optionally restricted to a VAPID
    /// public key, and registers it.
    package func subscribe(applicationServerKey: String? = nil) -> MockWebPushSubscriber {
        let subscriber = MockWebPushSubscriber(applicationServerKey: applicationServerKey)
        register(subscriber)
        return subscriber
    }

    /// Registers a subscription made elsewhere (known keys).
    package func register(_ subscriber: MockWebPushSubscriber) {
        state.withLock { $0.subscribers[subscriber.id] = subscriber }
    }

    /// What was accepted so far.
    package var received: [Received] { state.withLock { $0.received } }

    /// How many messages were accepted so far, and when each arrived.
    package let arrivals = ArrivalLog()

    /// Changes the behavior while running.
    package func update(_ change: (inout Behavior) -> Void) {
        state.withLock { change(&$0.behavior) }
    }

    // MARK: Answering

    struct Answer {
        var status: HTTPResponseStatus
        var headers: [(String, String)] = []
        var message: String?

        /// A message goes out as a small JSON error body.
        var response: MockHTTPResponse {
            guard let message else { return MockHTTPResponse(status: status, headers: headers) }
            let json = JSONValue.object([
                "code": .int(Int64(status.code)), "error": .string(status.reasonPhrase), "message": .string(message),
            ]).jsonText
            return MockHTTPResponse(
                status: status, headers: headers + [("content-type", "application/json")], body: ByteBuffer(string: json))
        }
    }

    func answer(head: HTTPRequestHead, body: ByteBuffer) -> Answer {
        func fail(_ status: HTTPResponseStatus, _ message: String, headers: [(String, String)] = []) -> Answer {
            Answer(status: status, headers: headers, message: message)
        }
        let (behavior, subscribers) = state.withLock { ($0.behavior, $0.subscribers) }
        guard head.method == .POST else { return fail(.methodNotAllowed, "push messages are POSTed") }
        let prefix = "/push/"
        let benchmark = behavior.benchmarkSubscriber != nil
        guard head.uri.hasPrefix(prefix),
            let subscriber = subscribers[String(head.uri.dropFirst(prefix.count))] ?? behavior.benchmarkSubscriber
        else {
            return fail(.notFound, "no such subscription")
        }
        if behavior.gone.contains(subscriber.id) { return fail(.gone, "the subscription has expired or was unsubscribed") }

        // VAPID (RFC 8292 §4.2): 401 when absent, 403 when invalid.
        guard let authorization = head.headers.first(name: "authorization") else {
            return fail(.unauthorized, "missing vapid authorization")
        }
        let host = head.headers.first(name: "host") ?? ""
        let vapidKey = "https://\(host) " + authorization
        if !benchmark || !state.withLock({ $0.verifiedVAPID.contains(vapidKey) }) {
            if let problem = Self.checkVAPID(
                authorization, audience: "https://\(host)", now: behavior.clock.now.epochSeconds,
                applicationServerKey: subscriber.applicationServerKey)
            {
                return fail(.forbidden, problem)
            }
            if benchmark { _ = state.withLock { $0.verifiedVAPID.insert(vapidKey) } }
        }

        // RFC 8030 §5.2–5.4.
        guard let ttl = head.headers.first(name: "ttl"), let seconds = Int64(ttl), seconds >= 0 else {
            return fail(.badRequest, "the TTL header is required: a number of seconds")
        }
        if let urgency = head.headers.first(name: "urgency"), !["very-low", "low", "normal", "high"].contains(urgency) {
            return fail(.badRequest, "Urgency is very-low, low, normal or high")
        }
        if let topic = head.headers.first(name: "topic") {
            let alphabet = topic.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
            guard !topic.isEmpty, topic.utf8.count <= 32, alphabet else {
                return fail(.badRequest, "Topic is at most 32 characters of the base64url alphabet")
            }
        }
        guard head.headers[canonicalForm: "content-encoding"].map({ $0.lowercased() }) == ["aes128gcm"] else {
            return fail(.badRequest, "Content-Encoding must be aes128gcm (RFC 8291 §4)")
        }
        guard body.readableBytes <= behavior.maximumBodyBytes else {
            return fail(.payloadTooLarge, "the body is \(body.readableBytes) bytes, over \(behavior.maximumBodyBytes)")
        }

        let fault = state.withLock { state -> HTTPResponseStatus? in
            if state.behavior.tooManyRequests.takeFault() { return .tooManyRequests }
            if state.behavior.serviceUnavailable.takeFault() { return .serviceUnavailable }
            return nil
        }
        if let fault {
            return fail(fault, "try again later", headers: behavior.retryAfter.map { [("retry-after", $0)] } ?? [])
        }

        // The browser's part: a message it cannot decrypt is lost; the mock says so instead.
        var plaintext: [UInt8] = []
        if !benchmark || arrivals.count % 1000 == 0 {
            do {
                plaintext = try WebPushEncryption.decrypt(
                    Array(body.readableBytesView), userAgentPrivateKey: subscriber.privateKey, authSecret: subscriber.authSecret)
            } catch {
                return fail(.badRequest, "the user agent could not decrypt the message: \(error)")
            }
        }
        arrivals.record()
        if benchmark {
            return Answer(status: .created, headers: [("location", "https://\(host)/message/\(UUID().lowercasedString)"), ("ttl", ttl)])
        }
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let version = head.version.major == 2 ? "HTTP/2.0" : "HTTP/1.1"
        let received = Received(subscriptionID: subscriber.id, headers: headers, plaintext: plaintext, httpVersion: version)
        state.withLock { $0.received.append(received) }
        behavior.onReceive?(received)
        return Answer(status: .created, headers: [("location", "https://\(host)/message/\(UUID().lowercasedString)"), ("ttl", ttl)])
    }

    /// Checks a `vapid t=…, k=…` authorization as RFC 8292 §4.2 lists; nil when valid, else why not.
    static func checkVAPID(_ authorization: String, audience: String, now: Int64, applicationServerKey: String?) -> String? {
        let trimmed = authorization.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("vapid ") else { return "the authorization scheme is not vapid" }
        var parameters: [String: String] = [:]
        for part in trimmed.dropFirst("vapid ".count).split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2 { parameters[pair[0].lowercased()] = pair[1] }
        }
        guard let token = parameters["t"], let key = parameters["k"] else { return "vapid needs both t and k" }
        guard let keyBytes = Base64URL.decode(key), let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes) else {
            return "k is not an uncompressed P-256 public key"
        }
        if let applicationServerKey, Base64URL.decode(applicationServerKey) != keyBytes {
            return "the subscription was made for another application server key"
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any]
        else { return "t is not a JWT" }
        guard header["alg"] as? String == "ES256" else { return "the JWT is not ES256" }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8))
        else { return "the JWT signature does not verify with k" }
        guard claims["aud"] as? String == audience else { return "aud is not this push service's origin, \(audience)" }
        guard let expiry = (claims["exp"] as? NSNumber)?.int64Value else { return "exp is missing" }
        guard expiry > now else { return "the JWT has expired" }
        guard expiry - now <= 86_400 else { return "exp is more than 24 hours away" }
        guard let subject = claims["sub"] as? String, subject.hasPrefix("mailto:") || subject.hasPrefix("https:") else {
            return "sub must be a mailto: or https: contact"
        }
        return nil
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
