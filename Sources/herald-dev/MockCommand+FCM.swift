import ArgumentParser
import Foundation
import HeraldMocks

extension MockCommand {
    /// `herald-dev mock fcm`: FCM's HTTP v1 API and a service account's OAuth2 token endpoint.
    struct FCM: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fcm",
            abstract: "Run a mock FCM (HTTP v1 API and the OAuth2 token endpoint, HTTP/2 + TLS) that answers like Google's.",
            discussion: """
                Writes the certificate authority of its throw-away TLS certificate to --ca-file; trust it
                (HERALD_EXTRA_CA_FILE) and point the FCM endpoint at https://127.0.0.1:PORT. Access tokens come from
                https://127.0.0.1:PORT/token, so a service account must have that token_uri: --write-service-account
                writes a fresh one for --project that the mock accepts. Assertions are verified with the keys of the
                service accounts given by --service-account FILE (or written), or only for shape and age if none is.
                """)

        @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
        @Option(help: "Port (0 picks a free one, printed at start).") var port: Int = 0
        @Option(name: .customLong("ca-file"), help: "Where to write the CA certificate (PEM).") var caFile: String = "mock-fcm-ca.pem"
        @Option(name: .customLong("service-account"), help: "A service-account JSON whose assertions to accept (repeatable).")
        var serviceAccounts: [String] = []
        @Option(name: .customLong("write-service-account"), help: "Write a fresh service-account JSON for this mock to FILE.")
        var writeServiceAccount: String?
        @Option(help: "The project of the written service account.") var project: String = "demo-project"
        @Option(help: "A registration token to answer 404 UNREGISTERED (repeatable).") var unregistered: [String] = []
        @Option(help: "Event-loop threads.") var threads: Int = 1
        @Option(help: "Benchmark mode: keep only counts and arrival times, and report when this many were accepted.")
        var expect: Int?
        @Option(help: "With --expect: where to write the arrival times (uptime ns, 8 bytes little-endian each).")
        var arrivals: String?

        func run() async throws {
            let tls = try MockTLS()
            try tls.caCertificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            var behavior = MockFCMServer.Behavior()
            for file in serviceAccounts {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ValidationError("--service-account \(file) cannot be read")
                }
                let account = try MockFCMServer.Account(serviceAccountJSON: String(decoding: data, as: UTF8.self))
                behavior.accounts[account.clientEmail] = account
            }
            behavior.acceptAnyAccount = serviceAccounts.isEmpty && writeServiceAccount == nil
            behavior.unregistered = Set(unregistered)
            behavior.recordsMessages = expect == nil
            let server = MockFCMServer(tls: tls, behavior: behavior, threads: threads)
            let bound = try await server.start(host: host, port: port)
            let tokenURI = "https://\(host):\(bound)/token"
            if let writeServiceAccount {
                let (json, account) = try MockFCMServer.makeServiceAccount(projectID: project, tokenURI: tokenURI)
                try json.write(toFile: writeServiceAccount, atomically: true, encoding: .utf8)
                server.update { $0.accounts[account.clientEmail] = account }
            }
            // Written unbuffered, so that a script reading the port sees it at once.
            FileHandle.standardOutput.write(
                Data(
                    "mock FCM listening on https://\(host):\(bound) (token endpoint \(tokenURI), CA certificate in \(caFile))\n".utf8))
            try await MockCommand.serve(reporting: server.arrivals, expect: expect, arrivalsFile: arrivals)
            await server.shutdown()
        }
    }
}
