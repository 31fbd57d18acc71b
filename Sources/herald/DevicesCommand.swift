import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCommandLine
import NIOCore

/// `herald devices export|import`: an application's devices as NDJSON, through the admin API.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Export or import an application's devices (NDJSON, one device a line).",
        subcommands: [Export.self, Import.self])

    /// The longest an export or import may take before the command gives up.
    static let deadline = TimeAmount.hours(6)

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every device of an application as NDJSON (device_uuid, platform_uuid, token, tags, …).")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String
        @Option(help: "The file to write (default: standard output).") var output: String?

        func run() async throws {
            let admin = AdminClient(options: client)
            let response = try await HTTPClient.shared.execute(
                try admin.request(.GET, "/admin/v1/apps/\(app)/devices/export"), timeout: DevicesCommand.deadline)
            guard response.status == .ok else {
                try await admin.printAnswer(response)
                return
            }
            let handle: FileHandle
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
                    throw ValidationError("--output: cannot write \(output)")
                }
                handle = file
            } else {
                handle = FileHandle.standardOutput
            }
            defer { if output != nil { try? handle.close() } }
            var progress = TransferProgress(verb: "exported", total: nil)
            for try await buffer in response.body {
                try handle.write(contentsOf: buffer.readableBytesView)
                progress.advance(
                    bytes: buffer.readableBytes, lines: buffer.readableBytesView.lazy.filter { $0 == UInt8(ascii: "\n") }.count)
            }
            progress.finish()
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import devices from an NDJSON file (as export writes it), keeping their uuids; prints the report.",
            discussion: """
                Each line is checked as a registration of its platform; a device this application has is updated, a \
                new one is created with its uuid, and a bad line is rejected without stopping the others. Running the \
                same file again changes nothing. The platforms must exist first (herald platform add --uuid …).
                """)
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String
        @Argument(help: "The NDJSON file.") var file: String

        func run() async throws {
            guard let handle = FileHandle(forReadingAtPath: file),
                let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber
            else {
                throw ValidationError("cannot read \(file)")
            }
            let admin = AdminClient(options: client)
            var request = try admin.request(.POST, "/admin/v1/apps/\(app)/devices/import")
            request.headers.add(name: "Content-Type", value: "application/x-ndjson")
            let chunks = FileChunks(handle: handle, total: size.int64Value)
            request.body = .stream(chunks, length: .known(size.int64Value))
            let response = try await HTTPClient.shared.execute(request, timeout: DevicesCommand.deadline)
            chunks.progress.state.withLock { $0.finish() }
            try await admin.printAnswer(response)
        }
    }
}
