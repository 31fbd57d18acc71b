import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.Data
import class Foundation.JSONDecoder
import struct Foundation.UUID

/// How large a device import may be.
package struct DeviceImportConfiguration: Sendable {
    /// The most bytes one import body may hold (chunked or not); past it the import stops with
    /// 413, and the answer says what was written.
    package var maximumBytes: Int64 = 4 << 30
    /// The longest line; a longer one is rejected and skipped.
    package var maximumLineBytes = 64 << 10
    /// Devices written per transaction; nil for the database's default
    /// (`defaultDevicesPerTransaction`).
    package var devicesPerTransaction: Int?
    /// Transactions written at once while the next lines are read (each waits for its turn on
    /// SQLite's single writer; on PostgreSQL each has a connection).
    package var transactionsInFlight = 2
    /// After writing at least this many devices, the import refreshes the planner's statistics.
    package var analyzeAfter = 10_000

    package init() {}

    /// Devices per transaction when none is configured. On SQLite a commit writes every page the
    /// transaction changed to the WAL, and an import's random `uuid` and `token` keys change
    /// nearly the same index pages in every chunk: fewer, larger commits write each of them
    /// fewer times (docs/benchmarks-history.md, device import, third pass). On PostgreSQL each transaction
    /// has a connection of its own and smaller ones spread over the cores.
    package static func defaultDevicesPerTransaction(_ dialect: SQLDialect) -> Int {
        switch dialect {
        case .sqlite: 10_000
        case .postgres: 2000
        }
    }

    /// Devices per transaction on `dialect`.
    func devicesPerTransaction(on dialect: SQLDialect) -> Int {
        devicesPerTransaction ?? Self.defaultDevicesPerTransaction(dialect)
    }
}

/// `/admin/v1/apps/:app/devices/export` and `/import`: an application's devices as NDJSON, one
/// device a line, both ways, streamed: neither side ever holds the application's devices.
struct DeviceTransferController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let clock: EpochClock
    var configuration = DeviceImportConfiguration()
    /// A WNS channel host accepted besides `*.notify.windows.com` (a test WNS).
    var wnsTestHost: String? = nil
    /// Devices read per page of an export (one text of ≈ 300 bytes a device).
    static var exportPage: Int { 2000 }
    /// Export pages read at once.
    static var exportReadAhead: Int { 2 }

    func addRoutes(to router: Router<Context>) {
        let admin = router.group("admin/v1")
        admin.get("apps/:app/devices/export", use: export)
        admin.post("apps/:app/devices/import", use: importDevices)
    }

    // MARK: Export

    @Sendable func export(_ request: Request, context: Context) async throws -> Response {
        let app = try await application(request, context)
        let store = self.store
        return Response(
            status: .ok, headers: [.contentType: "application/x-ndjson"],
            body: ResponseBody { writer in
                // Pages are read ahead while this one is written, each by its own connection
                // (`exportReadAhead` at once): the database writes the lines
                // (`DeviceRepository.exportPage`), and one connection's process formatting them
                // would be the export's limit. Where each page ends is found first, by an
                // index-only scan, so that the pages need not wait for each other.
                var reads: [Task<ExportPage?, any Error>] = []
                var after: Int64 = 0
                var more = true
                do {
                    while true {
                        while more, reads.count < Self.exportReadAhead {
                            guard
                                let end = try await store.devices.exportPageEnd(applicationID: app.id, after: after, limit: Self.exportPage)
                            else {
                                more = false
                                break
                            }
                            let start = after
                            reads.append(Task { try await store.devices.exportPage(applicationID: app.id, after: start, through: end) })
                            after = end
                        }
                        guard !reads.isEmpty else { break }
                        let next = reads.removeFirst()
                        let page = try await withTaskCancellationHandler {
                            try await next.value
                        } onCancel: {
                            next.cancel()
                        }
                        guard let page else { continue }
                        var buffer = ByteBufferAllocator().buffer(capacity: page.lines.utf8.count + 1)
                        buffer.writeString(page.lines)
                        buffer.writeInteger(UInt8(ascii: "\n"))
                        try await writer.write(buffer)
                    }
                } catch {
                    for read in reads { read.cancel() }
                    throw error
                }
                try await writer.finish(nil)
            })
    }

    // MARK: Import

    @Sendable func importDevices(_ request: Request, context: Context) async throws -> DeviceImportReport {
        let app = try await application(request, context)
        if let length = request.headers[.contentLength].flatMap({ Int64($0) }), length > configuration.maximumBytes {
            throw Self.tooLarge(configuration.maximumBytes, report: nil)
        }
        var platforms: [UUID: Platform] = [:]
        for platform in try await store.platforms.list(applicationID: app.id) { platforms[platform.id] = platform }

        var importer = Importer(
            store: store, applicationID: app.id, platforms: platforms, configuration: configuration, wnsTestHost: wnsTestHost, clock: clock)
        var splitter = NDJSONLineSplitter(maximumLineBytes: configuration.maximumLineBytes)
        let devicesPerTransaction = configuration.devicesPerTransaction(on: store.database.dialect)
        var received: Int64 = 0
        for try await buffer in request.body {
            received += Int64(buffer.readableBytes)
            if received > configuration.maximumBytes {
                try await importer.flush()
                try await importer.finish()
                throw Self.tooLarge(configuration.maximumBytes, report: importer.report)
            }
            splitter.feed(buffer) { importer.take($0) }
            if importer.pendingCount >= devicesPerTransaction { try await importer.flush() }
        }
        splitter.finish { importer.take($0) }
        try await importer.flush()
        try await importer.finish()
        guard importer.report.lines > 0 else {
            throw APIError.badRequest("the body holds no device lines; NDJSON is expected, one device a line", code: "invalid_json")
        }
        importer.report.rejections.sort { $0.line < $1.line }
        if importer.report.imported + importer.report.updated >= configuration.analyzeAfter {
            try await store.devices.refreshStatistics()
        }
        return importer.report
    }

    static func tooLarge(_ limit: Int64, report: DeviceImportReport?) -> APIError {
        var message = "the import body is larger than \(limit) bytes (the server's --import-max-bytes); split the file"
        if let report {
            message +=
                "; before stopping, lines 1 to \(report.lines) were read: \(report.imported) imported, \(report.updated) updated, \(report.rejected) rejected"
        }
        return APIError(.contentTooLarge, code: "body_too_large", message: message)
    }

    private func application(_ request: Request, _ context: Context) async throws -> App {
        try await AdminScope.application(request, context, auth: auth, store: store)
    }
}

/// Reads an import's lines, checks each, and writes them a transaction's worth at a time.
private struct Importer {
    let store: Store
    let applicationID: UUID
    let platforms: [UUID: Platform]
    let configuration: DeviceImportConfiguration
    let wnsTestHost: String?
    let clock: EpochClock
    let decoder = JSONDecoder()
    var report = DeviceImportReport()
    private var pending: [(line: Int, device: DeviceImport)] = []
    /// The uuids of this body so far: a second line with one is rejected.
    private var seen = Set<UUID>()

    init(
        store: Store, applicationID: UUID, platforms: [UUID: Platform], configuration: DeviceImportConfiguration, wnsTestHost: String?,
        clock: EpochClock
    ) {
        self.clock = clock
        self.store = store
        self.applicationID = applicationID
        self.platforms = platforms
        self.configuration = configuration
        self.wnsTestHost = wnsTestHost
    }

    var pendingCount: Int { pending.count }

    mutating func take(_ line: NDJSONLineSplitter.Line) {
        switch line {
        case .tooLong(let number):
            report.lines = number
            report.reject(
                line: number,
                ValidationError(
                    code: "line_too_long", message: "the line is longer than \(configuration.maximumLineBytes) bytes"))
        case .text(let number, let data):
            report.lines = number
            do throws(ValidationError) {
                // The plain lines an export writes are scanned directly; any other goes through
                // JSONDecoder, which answers the same or names the field that is wrong.
                let parsed: DeviceImportLine
                if let scanned = data.withUnsafeBytes({ DeviceImportLine.scan($0) }) {
                    parsed = scanned
                } else {
                    parsed = try Request.decodeJSONDocument(DeviceImportLine.self, from: data, decoder: decoder)
                }
                let device = try parsed.validated(platforms: platforms, now: clock.now.epochMilliseconds, wnsTestHost: wnsTestHost)
                guard seen.insert(device.uuid).inserted else {
                    throw ValidationError(
                        code: "duplicate", message: "this device_uuid is on an earlier line of this import", field: "device_uuid")
                }
                pending.append((number, device))
            } catch {
                if error.code == "invalid_json" {
                    report.reject(line: number, ValidationError(code: "invalid_json", message: "the line is not a JSON object"))
                } else {
                    report.reject(line: number, error)
                }
            }
        }
    }

    /// The transactions being written while the next lines are read, oldest first: up to
    /// `DeviceImportConfiguration.transactionsInFlight` at once, counted in order. On PostgreSQL
    /// each runs on its own connection, so the server's work spreads over its cores; on SQLite
    /// the single writer always has the next chunk waiting.
    private var writing: [Task<(lines: [Int], outcomes: [DeviceImportOutcome]), any Error>] = []

    /// Starts writing the lines read so far, once a transaction slot is free.
    mutating func flush() async throws {
        guard !pending.isEmpty else { return }
        while writing.count >= max(1, configuration.transactionsInFlight) { try await finishOldest() }
        let batch = pending
        pending = []
        pending.reserveCapacity(batch.count)
        let (store, applicationID) = (self.store, self.applicationID)
        writing.append(
            Task {
                (batch.map(\.line), try await store.devices.importDevices(batch.map(\.device), applicationID: applicationID))
            })
    }

    /// Waits for every transaction being written and counts their outcomes.
    mutating func finish() async throws {
        while !writing.isEmpty { try await finishOldest() }
    }

    private mutating func finishOldest() async throws {
        let task = writing.removeFirst()
        let result: (lines: [Int], outcomes: [DeviceImportOutcome])
        do {
            result = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            for other in writing { other.cancel() }
            writing = []
            throw error
        }
        for (line, outcome) in zip(result.lines, result.outcomes) {
            switch outcome {
            case .imported: report.imported += 1
            case .updated: report.updated += 1
            case .rejected(let reason): report.reject(line: line, reason)
            }
        }
    }
}

/// The answer of an import: what was written and what was not, line by line.
struct DeviceImportReport: ResponseEncodable {
    /// The most rejections listed; `rejected` counts them all.
    static let listedRejections = 1000

    struct Rejection: Codable, Sendable, Equatable {
        var line: Int
        var code: String
        var field: String?
        var message: String
    }

    /// Lines read (the number of the last one).
    var lines = 0
    /// New devices, created with their uuids.
    var imported = 0
    /// Devices of this application overwritten with the line's values.
    var updated = 0
    var rejected = 0
    /// The first `listedRejections` rejections found, in line order.
    var rejections: [Rejection] = []

    mutating func reject(line: Int, _ error: ValidationError) {
        rejected += 1
        if rejections.count < Self.listedRejections {
            rejections.append(Rejection(line: line, code: error.code, field: error.field, message: error.message))
        }
    }
}
