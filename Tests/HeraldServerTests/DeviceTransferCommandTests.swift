import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `herald app create --uuid --api-key`, `herald platform add --uuid --secret`, `herald devices
/// export` and `import`: the real executable against a live server.
@Suite struct DeviceTransferCommandTests {
    /// Runs `herald` with `arguments`; its exit status, standard output and standard error.
    static func herald(_ arguments: [String], within deadline: Duration = .seconds(60)) async throws -> (Int32, String, String) {
        let directory = NSTemporaryDirectory() + "herald-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = try HeraldProcess.executable()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        _ = FileManager.default.createFile(atPath: "\(directory)/out", contents: nil)
        _ = FileManager.default.createFile(atPath: "\(directory)/err", contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: "\(directory)/out")
        process.standardError = FileHandle(forWritingAtPath: "\(directory)/err")
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let end = ContinuousClock.now + deadline
        while process.isRunning {
            guard ContinuousClock.now < end else {
                process.terminate()
                throw TestFailure(message: "herald \(arguments.first ?? "") did not exit in time")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return (
            process.terminationStatus, try String(contentsOfFile: "\(directory)/out", encoding: .utf8),
            try String(contentsOfFile: "\(directory)/err", encoding: .utf8)
        )
    }

    @Test(arguments: Backend.available)
    func theCommandsKeepIdentitiesAndMoveDevices(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { harness, client in
            let port = try #require(client.port)
            // `--token=…` here; `--token VALUE` with a value starting with "-" is tested below.
            let server = ["--url", "http://127.0.0.1:\(port)", "--token=\(harness.adminToken)"]
            let appUUID = DeviceTransferTests.appUUID
            let (created, createdOut, _) = try await Self.herald(
                ["app", "create", "Moved", "--uuid", appUUID, "--api-key", DeviceTransferTests.apiKey] + server)
            #expect(created == 0)
            #expect(createdOut.contains(appUUID))
            let (added, _, _) = try await Self.herald(
                [
                    "platform", "add", "android", "--app", appUUID, "--uuid", DeviceTransferTests.androidUUID, "--secret",
                    DeviceTransferTests.secret,
                ] + server)
            #expect(added == 0)
            let (taken, takenOut, _) = try await Self.herald(["app", "create", "Again", "--uuid", appUUID] + server)
            #expect(taken != 0)
            #expect(takenOut.contains("\"field\" : \"uuid\""))

            let directory = NSTemporaryDirectory() + "herald-devices-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let lines = (0..<50).map {
                #"{"device_uuid":"\#(UUID().uuidString.lowercased())","platform_uuid":"\#(DeviceTransferTests.androidUUID)","registration_token":"cli-\#($0)","tags":["t\#($0 % 3)"]}"#
            }
            try (lines.joined(separator: "\n") + "\n").write(toFile: "\(directory)/in.ndjson", atomically: true, encoding: .utf8)
            let (imported, report, progress) = try await Self.herald(
                ["devices", "import", "--app", appUUID, "\(directory)/in.ndjson"] + server)
            #expect(imported == 0)
            #expect(report.contains("\"imported\" : 50"))
            // Not a terminal: plain lines, no bar.
            #expect(progress.contains("sent 50 devices"))
            #expect(!progress.contains("\r"))

            let (exported, _, exportProgress) = try await Self.herald(
                ["devices", "export", "--app", appUUID, "--output", "\(directory)/out.ndjson"] + server)
            #expect(exported == 0)
            #expect(exportProgress.contains("exported 50 devices"))
            let written = try String(contentsOfFile: "\(directory)/out.ndjson", encoding: .utf8)
            #expect(written.split(separator: "\n").count == 50)
            for line in lines.prefix(3) {
                let uuid = String(line.split(separator: "\"")[3])
                #expect(written.contains(uuid))
            }
            // Importing the export again changes nothing.
            let (again, againReport, _) = try await Self.herald(
                ["devices", "import", "--app", appUUID, "\(directory)/out.ndjson"] + server)
            #expect(again == 0)
            #expect(againReport.contains("\"updated\" : 50"))
            let (_, stdout, _) = try await Self.herald(["devices", "export", "--app", appUUID] + server)
            #expect(stdout == written)
        }
    }

    /// Tokens, api keys and secrets made before generation avoided a leading `-` still work as
    /// the next argument (`--token VALUE`), not taken for an option.
    @Test(arguments: Backend.available)
    func valuesStartingWithADashAreTakenAsValues(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { harness, client in
            let port = try #require(client.port)
            let dashed = "-" + Secret.generate().dropFirst()
            _ = try await harness.store.adminTokens.create(tenantID: nil, name: "dashed", token: dashed)
            let server = ["--url", "http://127.0.0.1:\(port)", "--token", dashed]
            let (listed, listedOut, listedErr) = try await Self.herald(["tenant", "list"] + server)
            #expect(listed == 0, "\(listedOut)\(listedErr)")
            #expect(listedOut.contains("\"name\" : \"default\""))
            let (created, createdOut, createdErr) = try await Self.herald(
                ["app", "create", "Dashed", "--uuid", DeviceTransferTests.appUUID, "--api-key", "-kept-api-key-0123456789"] + server)
            #expect(created == 0, "\(createdOut)\(createdErr)")
            let (added, addedOut, addedErr) = try await Self.herald(
                ["platform", "add", "android", "--app", DeviceTransferTests.appUUID, "--secret", "-kept-platform-secret-0123"] + server)
            #expect(added == 0, "\(addedOut)\(addedErr)")
            let platform = try #require(addedOut.split(separator: "\"").drop { $0 != "uuid" }.dropFirst(2).first)
            let count = try await client.execute(
                uri: "/v1/registration/count", method: .get, headers: basic(String(platform), "-kept-platform-secret-0123"))
            #expect(count.status == .ok)
        }
    }
}
