import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldMocks

extension MockCommand {
    /// `herald-dev mock webpush`: a push service that decrypts what it receives, as a browser would.
    struct WebPush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webpush",
            abstract: "Run a mock Web Push service (HTTP/2 or HTTP/1.1 + TLS) that checks VAPID and decrypts each message.",
            discussion: """
                Writes the certificate authority of its throw-away TLS certificate to --ca-file. Its subscriptions (the
                browser's key pair and auth secret) are kept in --subscribers, created there (--count of them) when the
                file does not exist; at start the subscription JSON of each is printed, one a line: register those as web
                devices. Each message accepted is decrypted with its subscription's key and printed. With --expect (benchmarks),
                any /push/<id> on this origin is the first subscription, and messages are counted instead of printed.
                """)

        @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
        @Option(help: "Port (0 picks a free one, printed at start; subscriptions name it, so keep it fixed across runs).")
        var port: Int = 0
        @Option(name: .customLong("ca-file"), help: "Where to write the CA certificate (PEM).") var caFile: String = "mock-webpush-ca.pem"
        @Option(help: "A file of subscriptions with their private keys (JSON lines; test data only).")
        var subscribers: String = "mock-webpush-subscribers.jsonl"
        @Option(help: "How many subscriptions to create when --subscribers does not exist.") var count: Int = 1
        @Option(name: .customLong("application-server-key"), help: "Restrict new subscriptions to this VAPID public key (base64url).")
        var applicationServerKey: String?
        @Option(help: "A subscription id to answer 410 Gone (repeatable).") var gone: [String] = []
        @Option(help: "Event-loop threads.") var threads: Int = 1
        @Option(help: "Benchmark mode: keep only counts and arrival times, and report when this many were accepted.")
        var expect: Int?
        @Option(help: "With --expect: where to write the arrival times (uptime ns, 8 bytes little-endian each).")
        var arrivals: String?

        func run() async throws {
            let tls = try MockTLS()
            try tls.caCertificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            let known = try loadOrCreateSubscribers()
            var behavior = MockWebPushServer.Behavior()
            behavior.gone = Set(gone)
            if expect == nil {
                behavior.onReceive = { received in
                    FileHandle.standardOutput.write(Data("received for \(received.subscriptionID): \(received.text)\n".utf8))
                }
            } else {
                // Any /push/<id> is the first subscription: one key pair for a benchmark's audience.
                behavior.benchmarkSubscriber = known.first
            }
            let server = MockWebPushServer(tls: tls, behavior: behavior, threads: threads)
            for subscriber in known { server.register(subscriber) }
            let bound = try await server.start(host: host, port: port)
            let origin = "https://\(host):\(bound)"
            // Written unbuffered, so that a script reading the port sees it at once.
            var banner = "mock Web Push service listening on \(origin) (CA certificate in \(caFile)); subscriptions:\n"
            for subscriber in known { banner += subscriber.subscriptionJSON(origin: origin) + "\n" }
            FileHandle.standardOutput.write(Data(banner.utf8))
            try await MockCommand.serve(reporting: server.arrivals, expect: expect, arrivalsFile: arrivals)
            await server.shutdown()
        }

        /// Reads `--subscribers`, or creates `--count` subscriptions and writes them there (mode 0600).
        func loadOrCreateSubscribers() throws -> [MockWebPushSubscriber] {
            if let data = FileManager.default.contents(atPath: subscribers) {
                return try String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
                    let entry = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
                    guard let id = entry["id"], let key = entry["private_key"].flatMap(Base64URL.decode),
                        let auth = entry["auth"].flatMap(Base64URL.decode)
                    else { throw ArgumentParser.ValidationError("\(subscribers): each line needs id, private_key and auth") }
                    return MockWebPushSubscriber(
                        id: id, privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: key), authSecret: auth,
                        applicationServerKey: entry["application_server_key"])
                }
            }
            guard count > 0 else { throw ArgumentParser.ValidationError("--count must be at least 1") }
            let created = (0..<count).map { _ in MockWebPushSubscriber(applicationServerKey: applicationServerKey) }
            let lines = created.map { subscriber in
                var entry: [String: JSONValue] = [
                    "id": .string(subscriber.id), "private_key": .string(Base64URL.encode(Array(subscriber.privateKey.rawRepresentation))),
                    "auth": .string(subscriber.auth),
                ]
                if let key = subscriber.applicationServerKey { entry["application_server_key"] = .string(key) }
                return JSONValue.object(entry).jsonText
            }
            guard
                FileManager.default.createFile(
                    atPath: subscribers, contents: Data((lines.joined(separator: "\n") + "\n").utf8), attributes: [.posixPermissions: 0o600]
                )
            else { throw ArgumentParser.ValidationError("could not write \(subscribers)") }
            return created
        }
    }
}
