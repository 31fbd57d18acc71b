import AsyncHTTPClient
import HeraldCore
import HeraldStore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// What one POST of a webhook delivery came to.
struct WebhookAnswer: Sendable, Equatable {
    /// The receiver's status; nil when none came.
    var status: Int?
    /// Why no answer came (a refused address, a timeout, a failed connection).
    var error: String?
    /// The start of the answer's body.
    var excerpt: String?

    var succeeded: Bool { status.map { (200..<300).contains($0) } ?? false }
}

/// POSTs one signed delivery to its endpoint, connecting only to an address the policy allows.
///
/// The address is checked at every attempt, after resolution, not only when the endpoint was
/// registered: a name may resolve elsewhere later (DNS rebinding). The sender resolves the
/// host itself, checks the address, and has async-http-client connect to that very address
/// through its `dnsOverride` (which keeps the URL's host for TLS: SNI and certificate
/// verification still use the name). async-http-client has no per-request resolver hook, and
/// `dnsOverride` is a client setting, so each attempt uses a client of its own on the shared
/// event loops: webhooks are few, and a fresh connection per attempt also means no pooled
/// connection can outlive the check. No proxy is used (a proxy would resolve the name itself),
/// and redirects are not followed (a 3xx is an answer, retried like any non-2xx).
struct WebhookSender: Sendable {
    let configuration: WebhookConfiguration
    let clock: EpochClock
    /// The TLS settings of every attempt, with the extra CA read once (a bad PEM fails each
    /// attempt, as it would if read there).
    private let tls: Result<TLSConfiguration?, any Error>

    init(configuration: WebhookConfiguration, clock: EpochClock) {
        self.configuration = configuration
        self.clock = clock
        self.tls = Result {
            guard let pem = configuration.extraTrustedCAPEM else { return nil }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
            return tls
        }
    }

    func send(_ delivery: WebhookDelivery) async -> WebhookAnswer {
        let target: WebhookTarget
        do {
            target = try WebhookTarget(url: delivery.url, policy: configuration.addressPolicy)
        } catch {
            return WebhookAnswer(status: nil, error: "refused: \(error.message)", excerpt: nil)
        }
        do {
            return try await withThrowingTaskGroup(of: WebhookAnswer.self) { group in
                group.addTask { try await attempt(delivery, target: target) }
                group.addTask {
                    // The whole attempt, resolution included, is bounded.
                    try await Task.sleep(for: configuration.requestTimeout)
                    return WebhookAnswer(status: nil, error: "timed out after \(configuration.requestTimeout)", excerpt: nil)
                }
                defer { group.cancelAll() }
                return try await group.next() ?? WebhookAnswer(status: nil, error: "no answer", excerpt: nil)
            }
        } catch let refusal as WebhookRefusal {
            return WebhookAnswer(status: nil, error: refusal.message, excerpt: nil)
        } catch {
            return WebhookAnswer(status: nil, error: "\(error)", excerpt: nil)
        }
    }

    private func attempt(_ delivery: WebhookDelivery, target: WebhookTarget) async throws -> WebhookAnswer {
        let address = try await Self.resolve(target.host, port: target.port)
        guard configuration.addressPolicy.allows(address) else {
            throw WebhookRefusal(
                message: "refused: \(target.host) resolves to \(address), a private, loopback or otherwise non-public address")
        }
        var client = HTTPClient.Configuration()
        client.redirectConfiguration = .disallow
        client.timeout = .init(
            connect: .milliseconds(configuration.connectTimeout.milliseconds),
            read: .milliseconds(configuration.requestTimeout.milliseconds))
        client.proxy = nil
        client.httpVersion = .http1Only
        if let tls = try tls.get() { client.tlsConfiguration = tls }
        if WebhookAddressPolicy.isPublic(target.host) == nil {
            client.dnsOverride = [target.host: address]
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
        do {
            let answer = try await post(delivery, with: http)
            try await http.shutdown()
            return answer
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    private func post(_ delivery: WebhookDelivery, with http: HTTPClient) async throws -> WebhookAnswer {
        let body = Array(delivery.body.utf8)
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Herald-Webhooks")
        request.headers.add(name: "Herald-Event-Id", value: delivery.eventID.lowercasedString)
        request.headers.add(name: "Herald-Event-Type", value: delivery.eventType)
        request.headers.add(
            name: "Herald-Signature",
            value: WebhookSignature.header(secret: delivery.secret, timestamp: clock.now.epochSeconds, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await http.execute(request, timeout: .milliseconds(configuration.requestTimeout.milliseconds))
        // Only the start of the answer is kept; the rest is not read.
        var excerpt: [UInt8] = []
        for try await chunk in response.body {
            excerpt.append(contentsOf: chunk.readableBytesView.prefix(configuration.excerptBytes - excerpt.count))
            if excerpt.count >= configuration.excerptBytes { break }
        }
        return WebhookAnswer(status: Int(response.status.code), error: nil, excerpt: Self.text(excerpt))
    }

    /// The address a connection to `host` uses: the host itself when it is an IP address, else
    /// the first address the system resolver gives (on NIO's thread pool: `getaddrinfo` blocks).
    static func resolve(_ host: String, port: Int) async throws -> String {
        if WebhookAddressPolicy.isPublic(host) != nil { return host }
        let address = try await NIOThreadPool.singleton.runIfActive {
            try SocketAddress.makeAddressResolvingHost(host, port: port)
        }
        guard let ip = address.ipAddress else {
            throw WebhookRefusal(message: "refused: \(host) does not resolve to an IP address")
        }
        return ip
    }

    /// Printable text of an answer's first bytes (invalid UTF-8 and control characters replaced).
    static func text(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty else { return nil }
        return String(
            String(decoding: bytes, as: UTF8.self).map { $0.isASCII && ($0.asciiValue! < 0x20 || $0.asciiValue! == 0x7f) ? " " : $0 })
    }
}

/// An attempt the sender would not make (an address the policy refuses).
struct WebhookRefusal: Error, Sendable {
    var message: String
}
