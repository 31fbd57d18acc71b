import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

/// The Herald an import writes to: its admin API (bearer token) for the application, platforms
/// and devices, and its Pivotal API with the imported application's own credentials for the rest,
/// so everything brought passes the rules it would meet if sent by hand.
struct HeraldTarget: Sendable {
    let http: HTTPClient
    /// The base URL, without a trailing `/`.
    let base: String
    let adminToken: String
    /// The imported application's `uuid:api_key`.
    let appCredentials: String
    let timeout: TimeAmount

    /// An answer: its status and JSON body (`.null` when there is none).
    struct Answer {
        var status: HTTPResponseStatus
        var json: JSONValue
        var ok: Bool { (200..<300).contains(status.code) }

        /// The `error.message` of an error answer, or the status.
        var errorMessage: String {
            if let error = json.objectValue?["error"]?.objectValue {
                var text = error["message"]?.stringValue ?? "\(status.code)"
                if let field = error["field"]?.stringValue { text += " (field \(field))" }
                return text
            }
            return "HTTP \(status.code)"
        }
    }

    /// An admin API call.
    func admin(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> Answer {
        try await send(method, path, authorization: bearer, body: body.map { ByteBuffer(string: $0.jsonText) })
    }

    /// A Pivotal API call with the application's credentials.
    func app(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> Answer {
        try await send(
            method, path, authorization: "Basic " + Data(appCredentials.utf8).base64EncodedString(),
            body: body.map { ByteBuffer(string: $0.jsonText) })
    }

    /// `POST /admin/v1/apps/:app/devices/import` with NDJSON lines: the import report.
    func importDevices(app: String, ndjson: ByteBuffer) async throws -> Answer {
        try await send(
            .POST, "/admin/v1/apps/\(app)/devices/import", authorization: bearer, body: ndjson,
            contentType: "application/x-ndjson")
    }

    /// Every line of `GET /admin/v1/apps/:app/devices/export`, as they arrive.
    func exportDevices(app: String, each: (Substring) throws -> Void) async throws {
        let path = "/admin/v1/apps/\(app)/devices/export"
        let response = try await http.execute(request(.GET, path, authorization: bearer), timeout: DevicesCommand.deadline)
        guard response.status == .ok else {
            throw TargetError(path: path, answer: Self.answer(response.status, try await response.body.collect(upTo: 1 << 20)))
        }
        var pending = ""
        for try await buffer in response.body {
            pending += String(buffer: buffer)
            guard let last = pending.lastIndex(of: "\n") else { continue }
            for line in pending[..<last].split(separator: "\n", omittingEmptySubsequences: true) { try each(line) }
            pending = String(pending[pending.index(after: last)...])
        }
        if !pending.isEmpty { try each(pending[...]) }
    }

    /// Snapshots one request saves (the admin API's page).
    static let snapshotsPerRequest = 1000

    /// What the previous import from `source` saw of each device: its JSON text by lower-case
    /// device uuid (`GET /admin/v1/apps/:app/import_snapshots`, a page at a time).
    func snapshots(app: String, source: String) async throws -> [String: String] {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
        var all: [String: String] = [:]
        var after = ""
        while true {
            let path = "/admin/v1/apps/\(app)/import_snapshots?source=\(encoded)" + (after.isEmpty ? "" : "&after=\(after)")
            let answer = try await admin(.GET, path)
            guard answer.ok, let page = answer.json.objectValue, case .array(let items)? = page["snapshots"] else {
                throw TargetError(path: "GET \(path)", answer: answer)
            }
            for case .object(let item) in items {
                if let uuid = item["device_uuid"]?.stringValue, let snapshot = item["snapshot"] { all[uuid] = snapshot.jsonText }
            }
            guard let next = page["next"]?.stringValue else { return all }
            after = next
        }
    }

    /// Saves what this import saw of each device at `source` (`POST …/import_snapshots`).
    func saveSnapshots(app: String, source: String, _ snapshots: [(String, JSONValue)]) async throws {
        let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
        let path = "/admin/v1/apps/\(app)/import_snapshots?source=\(encoded)"
        for start in stride(from: 0, to: snapshots.count, by: Self.snapshotsPerRequest) {
            let items = snapshots[start..<min(start + Self.snapshotsPerRequest, snapshots.count)].map { uuid, snapshot in
                JSONValue.object(["device_uuid": .string(uuid), "snapshot": snapshot])
            }
            let answer = try await admin(.POST, path, body: .object(["snapshots": .array(Array(items))]))
            guard answer.ok else { throw TargetError(path: "POST \(path)", answer: answer) }
        }
    }

    private func send(
        _ method: HTTPMethod, _ path: String, authorization: String, body: ByteBuffer?, contentType: String = "application/json"
    ) async throws -> Answer {
        var request = request(method, path, authorization: authorization)
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(body)
        }
        let response = try await http.execute(request, timeout: timeout)
        return Self.answer(response.status, try await response.body.collect(upTo: 16 << 20))
    }

    private var bearer: String { "Bearer \(adminToken)" }

    /// A request to `path` on the target, with `authorization`.
    private func request(_ method: HTTPMethod, _ path: String, authorization: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: authorization)
        return request
    }

    /// An answer with its body read as JSON (`.null` when it is empty or not JSON).
    private static func answer(_ status: HTTPResponseStatus, _ body: ByteBuffer) -> Answer {
        Answer(status: status, json: (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView))) ?? .null)
    }
}

/// The target refused what it must accept for the import to go on (its admin token, the
/// application's api key): the path and the target's own message.
struct TargetError: Error, CustomStringConvertible {
    let path: String
    let answer: HeraldTarget.Answer

    var description: String {
        "the target answered \(answer.status.code) to \(path): \(answer.errorMessage)"
    }
}
