import ArgumentParser
import Foundation
import HeraldMocks

extension MockCommand {
    /// `herald-dev mock wns`: WNS's token endpoint and channels.
    struct WNS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "wns",
            abstract: "Run a mock WNS (the access-token endpoint and channel URIs, HTTP/1.1 + TLS) that answers like Microsoft's.",
            discussion: """
                Writes the certificate authority of its throw-away TLS certificate to --ca-file; trust it
                (HERALD_EXTRA_CA_FILE). Access tokens come from https://HOST:PORT/accesstoken.srf for the package SID
                and secret given by --client-id and --client-secret (any, if none are given); channel URIs are
                https://HOST:PORT/w/?token=ANYTHING, and a sender must allow HOST as its WNS test host. Each
                notification accepted is printed.
                """)

        @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
        @Option(help: "Port (0 picks a free one, printed at start).") var port: Int = 0
        @Option(name: .customLong("ca-file"), help: "Where to write the CA certificate (PEM).") var caFile: String = "mock-wns-ca.pem"
        @Option(name: .customLong("client-id"), help: "The package SID (ms-app://…) to accept.") var clientID: String?
        @Option(name: .customLong("client-secret"), help: "Its client secret.") var clientSecret: String?
        @Option(help: "A channel token to answer 410 Gone (repeatable).") var gone: [String] = []
        @Option(help: "Event-loop threads.") var threads: Int = 1
        @Option(help: "Benchmark mode: keep only counts and arrival times, and report when this many were accepted.")
        var expect: Int?
        @Option(help: "With --expect: where to write the arrival times (uptime ns, 8 bytes little-endian each).")
        var arrivals: String?

        func validate() throws {
            guard (clientID == nil) == (clientSecret == nil) else {
                throw ValidationError("give --client-id and --client-secret together")
            }
        }

        func run() async throws {
            let tls = try MockTLS()
            try tls.caCertificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            var behavior = MockWNSServer.Behavior()
            if let clientID, let clientSecret {
                behavior.clients[clientID] = clientSecret
            } else {
                behavior.acceptAnyClient = true
            }
            behavior.gone = Set(gone)
            behavior.recordsMessages = expect == nil
            if expect == nil {
                behavior.onReceive = { received in
                    FileHandle.standardOutput.write(Data("received \(received.type) for \(received.channel): \(received.text)\n".utf8))
                }
            }
            let server = MockWNSServer(tls: tls, behavior: behavior, threads: threads)
            let bound = try await server.start(host: host, port: port)
            let origin = "https://\(host):\(bound)"
            // Written unbuffered, so that a script reading the port sees it at once.
            FileHandle.standardOutput.write(
                Data(
                    """
                    mock WNS listening on \(origin) (token endpoint \(origin)/accesstoken.srf, CA certificate in \(caFile))
                    a channel URI: \(origin)/w/?token=device-1

                    """.utf8))
            try await MockCommand.serve(reporting: server.arrivals, expect: expect, arrivalsFile: arrivals)
            await server.shutdown()
        }
    }
}
