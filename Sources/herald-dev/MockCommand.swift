import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldMocks

/// `herald-dev mock …`: protocol-faithful provider mocks, for local development and benchmarks.
struct MockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock", abstract: "Run a mock push provider on this machine.",
        subcommands: [APNs.self, FCM.self, WebPush.self, WNS.self])

    struct APNs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apns",
            abstract: "Run a mock APNs (HTTP/2 + TLS) that answers like Apple's servers.",
            discussion: """
                Writes the certificate authority of its throw-away TLS certificate to --ca-file; point a platform's \
                endpoint at https://127.0.0.1:PORT and trust that CA (HERALD_EXTRA_CA_FILE). Provider tokens are \
                verified with the keys given by --p8 KEYID=FILE, or only for shape and age if none is given. \
                As Apple does with token auth, a connection allows one stream until a request brings a valid \
                provider token, then raises SETTINGS_MAX_CONCURRENT_STREAMS. The fault options make it misbehave \
                the way real networks and servers do, to watch a client cope.
                """)

        @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
        @Option(help: "Port (0 picks a free one, printed at start).") var port: Int = 0
        @Option(name: .customLong("ca-file"), help: "Where to write the CA certificate (PEM).") var caFile: String = "mock-apns-ca.pem"
        @Option(name: .customLong("p8"), help: "KEYID=FILE: a signing key whose tokens to accept (repeatable).") var keys: [String] = []
        @Option(help: "A device token to answer 410 Unregistered (repeatable).") var unregistered: [String] = []
        @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS of an authenticated connection.")
        var maxConcurrentStreams: Int = 1000
        @Flag(inversion: .prefixedNo, help: "Start each connection at one stream until a valid provider token arrives, as Apple does.")
        var oneStreamUntilAuthenticated = true
        @Option(name: .customLong("goaway-after"), help: "Send GOAWAY when this many requests have arrived on a connection (0: never).")
        var goAwayAfter: Int = 0
        @Option(name: .customLong("drop-after"), help: "Reset each connection when it has brought this many requests (0: never).")
        var dropAfter: Int = 0
        @Option(name: .customLong("response-delay"), help: "Milliseconds to wait before each answer.")
        var responseDelay: Int = 0
        @Option(name: .customLong("unavailable"), help: "Answer the first N notifications 503 ServiceUnavailable.")
        var unavailable: Int = 0
        @Option(help: "The Apple environment to play: sandbox (development) answers with apns-unique-id, production does not.")
        var environment: APNsEnvironment = .sandbox
        @Flag(
            inversion: .prefixedNo, help: "Check header blocks' HTTP/2 field syntax (RFC 9113 §8.2); the APNs rules are checked either way."
        )
        var headerBlockValidation = true
        @Option(help: "Event-loop threads.") var threads: Int = 1
        @Option(help: "Benchmark mode: keep only counts and arrival times, and report when this many were accepted.")
        var expect: Int?
        @Option(help: "With --expect: where to write the arrival times (uptime ns, 8 bytes little-endian each).")
        var arrivals: String?

        func run() async throws {
            let tls = try MockTLS()
            try tls.caCertificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            var behavior = MockAPNsServer.Behavior()
            for entry in keys {
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, let data = FileManager.default.contents(atPath: parts[1]) else {
                    throw ValidationError("--p8 takes KEYID=FILE with a readable .p8 file")
                }
                let key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
                behavior.signingKeys[parts[0]] = key.publicKey
            }
            behavior.acceptAnySigningKey = keys.isEmpty
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for token in unregistered { behavior.unregistered[token.lowercased()] = now }
            guard maxConcurrentStreams >= 1, goAwayAfter >= 0, dropAfter >= 0, responseDelay >= 0, unavailable >= 0 else {
                throw ValidationError("--max-concurrent-streams must be at least 1; the fault options 0 or more")
            }
            behavior.maxConcurrentStreams = maxConcurrentStreams
            behavior.oneStreamUntilAuthenticated = oneStreamUntilAuthenticated
            behavior.goAwayAfterStreams = goAwayAfter
            behavior.dropConnectionAfterRequests = dropAfter
            behavior.responseDelay = .milliseconds(responseDelay)
            behavior.serviceUnavailable = unavailable
            behavior.environment = environment
            behavior.validatesHeaderBlocks = headerBlockValidation
            behavior.recordsNotifications = expect == nil
            let server = MockAPNsServer(tls: tls, behavior: behavior, threads: threads)
            let bound = try await server.start(host: host, port: port)
            // Written unbuffered, so that a script reading the port sees it at once.
            FileHandle.standardOutput.write(Data("mock APNs listening on https://\(host):\(bound) (CA certificate in \(caFile))\n".utf8))
            try await MockCommand.serve(reporting: server.arrivals, expect: expect, arrivalsFile: arrivals)
            await server.shutdown()
        }
    }

    /// Runs until the process is stopped. In benchmark mode (`expect`), prints `accepted N` once
    /// `expect` messages were accepted, after writing their arrival times to `arrivalsFile`.
    static func serve(reporting log: ArrivalLog, expect: Int?, arrivalsFile: String?) async throws {
        if let expect {
            while log.count < expect {
                try await Task.sleep(for: .milliseconds(5))
            }
            if let arrivalsFile { try log.write(toFile: arrivalsFile) }
            FileHandle.standardOutput.write(Data("accepted \(log.count)\n".utf8))
        }
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}

/// `--environment sandbox|production`.
extension APNsEnvironment: ExpressibleByArgument {}
