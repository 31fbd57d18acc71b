import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.Data
import class Foundation.JSONDecoder
import struct Foundation.UUID

/// `GET`/`POST /admin/v1/apps/:app/import_snapshots?source=URL`: what `herald import` last saw
/// of each device at a source, read back a page at a time and saved after each write, so that
/// a re-run writes only what changed at the source; a bearer admin token.
struct ImportSnapshotsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    /// Snapshots a page shows, and one request may save.
    static var pageLimit: Int { 1000 }

    func addRoutes(to router: Router<Context>) {
        router.get("admin/v1/apps/:app/import_snapshots", use: list)
        router.post("admin/v1/apps/:app/import_snapshots", use: save)
    }

    struct Item: Codable, Sendable {
        var deviceUUID: String
        var snapshot: JSONValue

        enum CodingKeys: String, CodingKey {
            case deviceUUID = "device_uuid"
            case snapshot
        }
    }

    struct Page: ResponseEncodable {
        var snapshots: [Item]
        /// The `after` of the next page; null after the last.
        var next: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(snapshots, forKey: .snapshots)
            try container.encode(next, forKey: .next)
        }

        enum CodingKeys: String, CodingKey {
            case snapshots, next
        }
    }

    struct Input: Decodable {
        var snapshots: [Item]
    }

    struct Saved: ResponseEncodable {
        var saved: Int
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Page {
        let app = try await AdminScope.application(request, context, auth: auth, store: store)
        let parameters = request.uri.queryParameters
        let source = try Self.source(parameters.get("source"))
        var after = ""
        if let raw = parameters.get("after"), !raw.isEmpty {
            guard let uuid = UUID(text: raw) else { throw APIError.badRequest("after is a device uuid", field: "after") }
            after = uuid.lowercasedString
        }
        let rows = try await store.importSnapshots.list(applicationID: app.id, source: source, after: after, limit: Self.pageLimit)
        let decoder = JSONDecoder()
        let items = rows.map {
            Item(deviceUUID: $0.deviceUUID, snapshot: (try? decoder.decode(JSONValue.self, from: Data($0.snapshot.utf8))) ?? .null)
        }
        return Page(snapshots: items, next: rows.count == Self.pageLimit ? rows.last?.deviceUUID : nil)
    }

    @Sendable func save(_ request: Request, context: Context) async throws -> Saved {
        var request = request
        let app = try await AdminScope.application(request, context, auth: auth, store: store)
        let source = try Self.source(request.uri.queryParameters.get("source"))
        let input = try await request.decodeJSON(Input.self)
        guard input.snapshots.count <= Self.pageLimit else {
            throw APIError.badRequest("at most \(Self.pageLimit) snapshots a request", field: "snapshots")
        }
        var rows: [(deviceUUID: String, snapshot: String)] = []
        for (index, item) in input.snapshots.enumerated() {
            guard let uuid = UUID(text: item.deviceUUID) else {
                throw APIError.badRequest("a device uuid", field: "snapshots[\(index)].device_uuid")
            }
            guard item.snapshot.objectValue != nil else {
                throw APIError.badRequest("must be an object", field: "snapshots[\(index)].snapshot", code: "invalid_type")
            }
            rows.append((deviceUUID: uuid.lowercasedString, snapshot: item.snapshot.jsonText))
        }
        try await store.importSnapshots.save(applicationID: app.id, source: source, rows)
        return Saved(saved: rows.count)
    }

    /// The `source` parameter: the URL an import read from, 1 to 2,048 characters.
    static func source(_ raw: String?) throws -> String {
        guard let raw, !raw.isEmpty, raw.unicodeScalars.count <= 2048 else {
            throw APIError.badRequest("source is the URL imported from, 1 to 2048 characters", field: "source")
        }
        do {
            try raw.requireStorable(field: "source")
        } catch {
            throw APIError(error)
        }
        return raw
    }
}
