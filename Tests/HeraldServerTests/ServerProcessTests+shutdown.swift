import Foundation
import HeraldMocks
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31, defect 6 and the start-up half of defect 4, on the real `herald serve` process.
extension ServerProcessTests {
    /// Waits until the mock's request count has stopped moving (the server sent all it could)
    /// and returns it.
    func settledRequests(_ mock: MockAPNsServer, atLeast minimum: Int) async throws -> Int {
        var last = -1
        var stable = 0
        let end = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < end {
            let now = mock.statistics.requests
            stable = now == last && now >= minimum ? stable + 1 : 0
            if stable >= 10 { return now }
            last = now
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure(message: "the mock's requests never settled (\(last))")
    }

    /// SIGTERM while the provider answers nothing: no request starts after the signal, the ones
    /// on the wire get `--shutdown-grace` (here 2 s), and the process exits 0 soon after it,
    /// with no job left claimed. (Before, it waited for each request's 30 s timeout and then
    /// sent thousands of new requests: about 77 s.)
    @Test(arguments: Backend.available)
    func sigtermWithAStalledProviderExitsAfterTheGraceAndSendsNothingNew(_ backend: Backend) async throws {
        try await withSetup(backend) { setup in
            let devices = 3000
            _ = try await setup.seed(devices)
            setup.mock.update { $0.responseDelay = .seconds(120) }
            let server = try await setup.start(["--workers", "2", "--batch-size", "1000", "--shutdown-grace", "2"], name: "stalled")
            try await withServer(server) {
                _ = try await setup.broadcast(port: server.port)
                let before = try await settledRequests(setup.mock, atLeast: 1)
                let signalled = ContinuousClock.now
                server.kill(SIGTERM)
                let (status, reason) = try await server.waitForExit(within: .seconds(30))
                let took = ContinuousClock.now - signalled
                #expect(reason == .exit)
                #expect(status == 0, "exit status \(status)")
                #expect(took < .seconds(5), "the shutdown took \(took) with a 2 s grace")
                #expect(setup.mock.statistics.requests == before, "requests sent after SIGTERM")
            }
            #expect(try await setup.claimedJobs() == 0)
        }
    }

    /// SIGTERM while a healthy provider answers a broadcast: the answers in flight come at once,
    /// and the process exits within seconds, not after the grace or a request timeout. (The
    /// bound leaves room for a loaded test machine.)
    @Test(arguments: Backend.available)
    func sigtermWithAHealthyProviderExitsPromptly(_ backend: Backend) async throws {
        try await withSetup(backend) { setup in
            _ = try await setup.seed(3000)
            setup.mock.update { $0.responseDelay = .milliseconds(20) }
            let server = try await setup.start(["--workers", "2", "--batch-size", "500"], name: "healthy")
            try await withServer(server) {
                _ = try await setup.broadcast(port: server.port)
                try await DeliveryWorld.poll("the mock has requests in flight") { setup.mock.statistics.requests >= 100 }
                let signalled = ContinuousClock.now
                server.kill(SIGTERM)
                let (status, _) = try await server.waitForExit(within: .seconds(30))
                let took = ContinuousClock.now - signalled
                #expect(status == 0, "exit status \(status)")
                #expect(took < .seconds(5), "the shutdown took \(took)")
            }
            #expect(try await setup.claimedJobs() == 0)
        }
    }

    /// A second `herald serve` on a data directory whose SQLite database a live one holds is
    /// refused at start, naming the holder's pid; once the first has exited it starts.
    @Test func aSecondServerOnTheSameSQLiteDatabaseIsRefused() async throws {
        try await withSetup(.sqlite) { setup in
            let first = try await setup.start([], name: "first")
            try await withServer(first) {
                do {
                    let second = try await setup.start([], name: "second")
                    second.kill(SIGKILL)
                    Issue.record("a second server started beside the first")
                } catch let failure as TestFailure {
                    #expect(failure.message.contains("pid \(first.process.processIdentifier)"), "\(failure.message)")
                    #expect(failure.message.contains(setup.db.directory), "\(failure.message)")
                }
                first.kill(SIGTERM)
                #expect(try await first.waitForExit().status == 0)
            }
            let third = try await setup.start([], name: "third")
            third.kill(SIGTERM)
            #expect(try await third.waitForExit().status == 0)
        }
    }

    /// Issue 31, defect 4: an extra CA file TLS cannot load stops `herald serve` at start, naming
    /// the file and why: two certificates concatenated without a newline, a missing file, a file
    /// without a certificate.
    @Test func aBadExtraCAFileStopsTheStartNamingTheFile() async throws {
        try await withSetup(.sqlite) { setup in
            let good = try String(contentsOfFile: try #require(setup.environment["HERALD_EXTRA_CA_FILE"]), encoding: .utf8)
            let trimmed = good.trimmingCharacters(in: .whitespacesAndNewlines)
            let joined = setup.db.directory + "/joined.pem"
            try (trimmed + trimmed + "\n").write(toFile: joined, atomically: true, encoding: .utf8)
            let empty = setup.db.directory + "/empty.pem"
            try "not a certificate\n".write(toFile: empty, atomically: true, encoding: .utf8)
            let missing = setup.db.directory + "/missing.pem"
            for (file, cause) in [(joined, "runs on"), (empty, "no PEM certificate"), (missing, "no such file")] {
                var environment = setup.environment
                environment["HERALD_EXTRA_CA_FILE"] = file
                let bad = Setup(db: setup.db, mock: setup.mock, fixture: setup.fixture, environment: environment)
                do {
                    let server = try await bad.start([], name: "bad-ca")
                    server.kill(SIGKILL)
                    Issue.record("herald serve started with \(file)")
                } catch let failure as TestFailure {
                    #expect(failure.message.contains(file), "\(failure.message)")
                    #expect(failure.message.contains(cause), "\(failure.message)")
                }
            }
        }
    }
}
