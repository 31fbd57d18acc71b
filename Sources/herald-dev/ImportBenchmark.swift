import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldServer
import HeraldStore
import Logging
import NIOCore

/// `herald bench import`: a device import and export of an NDJSON file through a real `herald
/// serve` process; prints the devices/s both ways and the server's memory throughout.
struct ImportBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import --devices devices as NDJSON into `herald serve`, export them back, and measure both.",
        discussion: """
            Creates an app and an Android platform in a fresh store (SQLite in a temporary directory, or the
            PostgreSQL database given with --database-url), writes an NDJSON file of --devices devices (each with
            a token, two of ten tags, a custom user id, a time zone), starts `herald serve` as its own process,
            streams the file to POST /admin/v1/apps/:app/devices/import, then reads GET …/devices/export to the
            end. The server's resident memory is sampled every 100 ms. As a same-run reference for the
            machine's speed, the benchmark first decodes the file's lines with Foundation's JSONDecoder
            in its own process. Build with `swift build -c release` first and run the release binary.
            """)

    @Option(help: "Devices to import.") var devices: Int = 1_000_000
    @Option(name: .customLong("database-url"), help: "postgres://… to benchmark PostgreSQL (a scratch database).")
    var databaseURL: String?
    @Flag(help: "Keep the temporary directory (logs, database, file).") var keep = false

    func validate() throws {
        guard devices > 0 else { throw ValidationError("--devices must be at least 1") }
    }

    func run() async throws {
        let workspace = try BenchmarkWorkspace()
        defer { workspace.finish(keep: keep) }
        let directory = workspace.directory
        print("herald bench import: \(databaseURL == nil ? "SQLite" : "PostgreSQL"), \(devices) devices")
        let encryptionKey = SecretBox.generateEncodedKey()
        let configuration = ServerConfiguration(
            dataDirectory: directory + "/data", databaseURL: databaseURL, encryptionKey: encryptionKey, adminToken: nil, logLevel: .warning)
        let (appID, token, platformID) = try await seed(configuration)
        let file = directory + "/devices.ndjson"
        let size = try writeFile(file, platformID: platformID)
        print(String(format: "file: %.1f MiB", Double(size) / 1_048_576))
        let reference = try decodeReference(file)
        print(String(format: "reference: JSONDecoder in this process reads %.0f lines/s", reference))

        let port = try await BenchmarkServer.freePort()
        var arguments = ["serve", "--port", String(port), "--data-dir", directory + "/data", "--workers", "0", "--log-level", "warning"]
        if let databaseURL { arguments += ["--database-url", databaseURL] }
        let server = try ChildProcess(
            name: "herald serve", executable: workspace.herald, arguments: arguments,
            environment: ["HERALD_ENCRYPTION_KEY": encryptionKey], logPath: directory + "/serve.log")
        let base = "http://127.0.0.1:\(port)"
        do {
            try await BenchmarkServer.waitUntilServing(base, server: server)
            let pid = server.pid
            let idle = server.memoryKiB("VmRSS") ?? 0
            let sampler = Task { () -> Int in
                var peak = 0
                while !Task.isCancelled {
                    peak = max(peak, Self.residentKiB(pid) ?? 0)
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return peak
            }
            defer { sampler.cancel() }

            // Import.
            guard let handle = FileHandle(forReadingAtPath: file) else { throw BenchmarkError("cannot read \(file)") }
            var request = HTTPClientRequest(url: "\(base)/admin/v1/apps/\(appID)/devices/import")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "application/x-ndjson")
            request.body = .stream(FileChunks(handle: handle, total: size, quiet: true), length: .known(size))
            let importStart = ContinuousClock.now
            let response = try await HTTPClient.shared.execute(request, timeout: .hours(1))
            let report = try await response.body.collect(upTo: 16 << 20)
            let importSeconds = Self.seconds(ContinuousClock.now - importStart)
            try? handle.close()
            guard response.status == .ok,
                let json = try JSONSerialization.jsonObject(with: Data(buffer: report)) as? [String: Any],
                json["imported"] as? Int == devices, json["rejected"] as? Int == 0
            else {
                throw BenchmarkError("the import answered \(response.status): \(String(buffer: report).prefix(2000))")
            }
            print(String(format: "import: %d devices in %.2f s, %.0f devices/s", devices, importSeconds, Double(devices) / importSeconds))

            // Export.
            var export = HTTPClientRequest(url: "\(base)/admin/v1/apps/\(appID)/devices/export")
            export.headers.add(name: "Authorization", value: "Bearer \(token)")
            let exportStart = ContinuousClock.now
            let exported = try await HTTPClient.shared.execute(export, timeout: .hours(1))
            var lines = 0
            var bytes = 0
            for try await buffer in exported.body {
                bytes += buffer.readableBytes
                lines += buffer.readableBytesView.lazy.filter { $0 == UInt8(ascii: "\n") }.count
            }
            let exportSeconds = Self.seconds(ContinuousClock.now - exportStart)
            guard lines == devices else { throw BenchmarkError("the export had \(lines) lines, not \(devices)") }
            print(
                String(
                    format: "export: %d devices (%.1f MiB) in %.2f s, %.0f devices/s", lines, Double(bytes) / 1_048_576,
                    exportSeconds, Double(lines) / exportSeconds))

            sampler.cancel()
            let peak = await sampler.value
            let highWater = server.memoryKiB("VmHWM") ?? 0
            print(
                String(
                    format: "server memory: %.0f MiB idle, %.0f MiB peak sampled, %.0f MiB high-water mark (VmHWM)",
                    Double(idle) / 1024, Double(peak) / 1024, Double(highWater) / 1024))
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// The app and platform, and the root admin token the first start generated.
    private func seed(_ configuration: ServerConfiguration) async throws -> (app: String, token: String, platform: String) {
        var logger = Logger(label: "herald.bench")
        logger.logLevel = .warning
        let opened = try await Bootstrap.open(configuration, logger: logger)
        let store = opened.store
        do {
            let token: String
            if let generated = opened.generatedAdminToken {
                token = generated
            } else {
                token = try await store.adminTokens.create(tenantID: nil, name: "bench").1
            }
            guard let tenant = try await store.tenants.create(name: "bench-\(UUID().uuidString.prefix(8))") else {
                throw BenchmarkError("could not create the benchmark's tenant")
            }
            let (app, _) = try await store.applications.create(tenantID: tenant.id, name: "bench", description: "herald bench import")
            let (platform, _) = try await store.platforms.create(applicationID: app.id, name: "android", type: .android, credentials: nil)
            await store.database.shutdown()
            return (app.id.lowercasedString, token, platform.id.lowercasedString)
        } catch {
            await store.database.shutdown()
            throw error
        }
    }

    /// Writes the devices' NDJSON; returns its size in bytes.
    private func writeFile(_ path: String, platformID: String) throws -> Int64 {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw BenchmarkError("cannot write \(path)")
        }
        defer { try? handle.close() }
        var chunk = ""
        var size: Int64 = 0
        let zones = ["Europe/Paris", "America/New_York", "Asia/Tokyo"]
        for index in 0..<devices {
            chunk +=
                #"{"device_uuid":"\#(UUID().lowercasedString)","platform_uuid":"\#(platformID)","os":"android-fcm","#
                + #""os_version":"14","device_model":"Pixel 8","device_manufacturer":"Google","#
                + #""registration_token":"bench-token-\#(index):APA91bHun4MxP5egoKMwt2KZFBaFUH","#
                + #""tags":["tag-\#(index % 10)","tag-\#((index + 3) % 10)"],"custom_user_id":"user-\#(index)","#
                + #""time_zone":"\#(zones[index % 3])","active":true,"created_at":1700000000000,"updated_at":1700000000000}"# + "\n"
            if chunk.utf8.count > 1 << 20 {
                size += Int64(chunk.utf8.count)
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        size += Int64(chunk.utf8.count)
        try handle.write(contentsOf: Data(chunk.utf8))
        return size
    }

    /// Lines per second Foundation's JSONDecoder decodes here (at most 200,000 lines).
    private func decodeReference(_ path: String) throws -> Double {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BenchmarkError("cannot read \(path)") }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: 64 << 20) ?? Data()
        let lines = data.split(separator: UInt8(ascii: "\n")).prefix(200_000)
        let decoder = JSONDecoder()
        let start = ContinuousClock.now
        for line in lines { _ = try decoder.decode(DeviceImportLine.self, from: Data(line)) }
        return Double(lines.count) / Self.seconds(ContinuousClock.now - start)
    }
}
