import Foundation
import HeraldCommandLine
import HeraldCore
import NIOCore

/// `herald import pivotal`'s work: read everything the source shows for one application, then
/// write to the target only what it lacks. Every write is checked against the target first, so
/// a second run writes nothing and an interrupted one, run again, takes up where it stopped.
struct PivotalImport: Sendable {
    /// A platform named on the command line.
    struct GivenPlatform: Sendable {
        var uuid: String
        var secret: String
        var type: PlatformType?
    }

    let source: PivotalSource
    let target: HeraldTarget
    let appUUID: String
    let apiKey: String
    let platforms: [GivenPlatform]
    let tenant: String?
    let name: String
    /// Where the devices read are kept between the read and the write (NDJSON).
    let spool: String
    let quiet: Bool
    /// The wall clock (a schedule due within a minute is left to the source).
    let clock: EpochClock

    /// Devices a request to the import endpoint carries.
    static let devicesPerImport = 5_000

    /// What the source shows, read before anything is written.
    struct Snapshot {
        var platformTypes: [String: PlatformType] = [:]
        var devicesPerPlatform: [String: Int] = [:]
        /// A device of each platform, to check the platform's secret with.
        var sampleDevice: [String: String] = [:]
        var secretRefused: Set<String> = []
        var devicesInAll = 0
        var tagsShown = true
        var customUserIDsShown = true
        /// The tags of each device, rebuilt from the topics when registrations do not show them.
        var tagsByDevice: [String: [String]] = [:]
        var topics: [(name: String, expireAt: Int64?)] = []
        var customUserIDs: [String] = []
        /// Custom user ids told apart with `q` when registrations do not show them.
        var recovered = RecoveredCustomUserIDs()
        var schedules: [[String: JSONValue]] = []
        var locations: [[String: JSONValue]] = []
        var groups: [[String: JSONValue]] = []
        var geofences: [[String: JSONValue]] = []
    }

    // MARK: Run

    /// Reads, then writes; `summary` says what was written, also when this throws.
    func run(_ summary: inout ImportSummary) async throws {
        let snapshot = try await read()
        try await writeApplication(&summary)
        let brought = try await writePlatforms(snapshot, &summary)
        try await writeTopics(snapshot, &summary)
        let locationIDs = try await writeLocations(snapshot, &summary)
        try await writeGroups(snapshot, locationIDs: locationIDs, &summary)
        // Before the devices: a geofence created while its devices exist would push them an update.
        try await writeGeofences(snapshot, locationIDs: locationIDs, &summary)
        try await writeDevices(snapshot, platforms: brought, &summary)
        try await writeSchedules(snapshot, &summary)
    }

    // MARK: Read

    private func read() async throws -> Snapshot {
        var snapshot = Snapshot()
        let first = try await source.get("/v2/registrations?size=1&page=1")
        guard let total = first.objectValue?["totalRegistrations"]?.lenientInt else {
            throw SourceError.notPivotal("/v2/registrations?size=1&page=1", "no totalRegistrations")
        }
        snapshot.devicesInAll = Int(total)

        guard FileManager.default.createFile(atPath: spool, contents: nil), let file = FileHandle(forWritingAtPath: spool) else {
            throw ImportError("cannot write the device spool \(spool)")
        }
        defer { try? file.close() }
        var progress = TransferProgress(verb: "read", total: Int64(total), quiet: quiet)
        for platform in platforms {
            try await source.pages("/v2/registrations?platformUuid=\(platform.uuid)", key: "registrations") { items, _ in
                var buffer = ByteBuffer()
                for item in items {
                    guard var device = item.objectValue else {
                        throw SourceError.notPivotal("/v2/registrations", "a registration that is not an object")
                    }
                    device["platform_uuid"] = .string(platform.uuid)
                    if device["tags"] == nil { snapshot.tagsShown = false }
                    if device["custom_user_id"] == nil { snapshot.customUserIDsShown = false }
                    if snapshot.platformTypes[platform.uuid] == nil, let os = device["os"]?.stringValue {
                        snapshot.platformTypes[platform.uuid] = try? PlatformType.parse(os, field: "os")
                    }
                    if snapshot.sampleDevice[platform.uuid] == nil, let uuid = device["device_uuid"]?.stringValue {
                        snapshot.sampleDevice[platform.uuid] = uuid
                    }
                    buffer.writeString(JSONValue.object(device).jsonText)
                    buffer.writeString("\n")
                }
                try file.write(contentsOf: buffer.readableBytesView)
                snapshot.devicesPerPlatform[platform.uuid, default: 0] += items.count
                progress.advance(bytes: items.count, lines: items.count)
            }
            if let type = platform.type { snapshot.platformTypes[platform.uuid] = type }
            if let device = snapshot.sampleDevice[platform.uuid] {
                let status = try await source.status("/v1/registration/\(device)", credentials: "\(platform.uuid):\(platform.secret)")
                if status == .unauthorized || status == .forbidden { snapshot.secretRefused.insert(platform.uuid) }
            }
        }
        progress.finish()

        try await source.pages("/v2/topics", key: "topics") { items, _ in
            for item in items {
                guard let topic = item.objectValue, let name = topic["name"]?.stringValue else {
                    throw SourceError.notPivotal("/v2/topics", "a topic without a name")
                }
                snapshot.topics.append((name, topic["expireAt"]?.lenientInt))
            }
        }
        if !snapshot.tagsShown {
            // Pivotal's documented registrations have no tags: ask each topic for its devices.
            for topic in snapshot.topics {
                let name = topic.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? topic.name
                try await source.pages("/v2/registrations?topic=\(name)", key: "registrations") { items, _ in
                    for case .object(let device) in items {
                        if let uuid = device["device_uuid"]?.stringValue { snapshot.tagsByDevice[uuid, default: []].append(topic.name) }
                    }
                }
            }
        }
        let ids = try await source.get("/v2/custom_user_ids")
        guard case .array(let list)? = ids.objectValue?["custom_user_ids"] else {
            throw SourceError.notPivotal("/v2/custom_user_ids", "no 'custom_user_ids' list")
        }
        snapshot.customUserIDs = list.compactMap(\.stringValue)
        if !snapshot.customUserIDsShown && !snapshot.customUserIDs.isEmpty {
            snapshot.recovered = try await recoverCustomUserIDs(snapshot.customUserIDs)
        }
        guard case .array(let schedules) = try await source.get("/v1/schedules") else {
            throw SourceError.notPivotal("/v1/schedules", "not a list of schedules")
        }
        snapshot.schedules = schedules.compactMap(\.objectValue)
        snapshot.locations = try await objects("/v1/locations", key: "locations")
        snapshot.groups = try await objects("/v1/location_groups", key: "location_groups")
        snapshot.geofences = try await objects("/v1/geofence", key: "geofences")
        return snapshot
    }

    /// Every object of a paged listing.
    private func objects(_ path: String, key: String) async throws -> [[String: JSONValue]] {
        var all: [[String: JSONValue]] = []
        try await source.pages(path, key: key) { items, _ in
            for item in items {
                guard let object = item.objectValue else { throw SourceError.notPivotal(path, "an item that is not an object") }
                all.append(object)
            }
        }
        return all
    }

    // MARK: Application and platforms

    private func writeApplication(_ summary: inout ImportSummary) async throws {
        let path = "/admin/v1/apps/\(appUUID)"
        let existing = try await target.admin(.GET, path)
        switch existing.status {
        case .ok:
            if let tenant, let current = existing.json.objectValue?["tenant_id"]?.stringValue, current != tenant.lowercased() {
                throw ImportError("the target has application \(appUUID) in tenant \(current), not in --tenant \(tenant)")
            }
            summary.unchanged(.application)
        case .notFound:
            var body: [String: JSONValue] = [
                "name": .string(name), "uuid": .string(appUUID), "api_key": .string(apiKey),
                // Pivotal's SDKs send the plain custom user id.
                "verify_custom_user_id": .bool(false),
            ]
            if let tenant { body["tenant_id"] = .string(tenant) }
            let created = try await target.admin(.POST, "/admin/v1/apps", body: .object(body))
            guard created.status == .created else { throw TargetError(path: "POST /admin/v1/apps", answer: created) }
            summary.created(.application)
            summary.note(
                "application \(appUUID) was created with verify_custom_user_id false: registrations send plain custom user ids, as on Pivotal"
            )
        default:
            throw TargetError(path: "GET \(path)", answer: existing)
        }
        // The imported application's own credentials must work on the target for the rest.
        let check = try await target.app(.GET, "/v2/topics?size=1")
        guard check.ok else {
            if check.status == .unauthorized {
                throw ImportError("the target's application \(appUUID) has another api key than --app gives (401 on /v2/topics)")
            }
            throw TargetError(path: "GET /v2/topics", answer: check)
        }
    }

    /// Creates the platforms the target lacks; the uuids of those the devices may go to.
    private func writePlatforms(_ snapshot: Snapshot, _ summary: inout ImportSummary) async throws -> Set<String> {
        var brought: Set<String> = []
        for platform in platforms {
            let devices = snapshot.devicesPerPlatform[platform.uuid] ?? 0
            let lost = devices > 0 ? "; its \(devices) devices were not brought" : ""
            if snapshot.secretRefused.contains(platform.uuid) {
                summary.notBrought(
                    "platform \(platform.uuid): the source refused its secret (401 on GET /v1/registration/\(snapshot.sampleDevice[platform.uuid] ?? "")), so shipped apps could not use it\(lost)"
                )
                continue
            }
            guard let type = snapshot.platformTypes[platform.uuid] else {
                summary.notBrought(
                    "platform \(platform.uuid): no device shows its type; give it as --platform \(platform.uuid):SECRET:TYPE (ios, android, web or windows)"
                )
                continue
            }
            let existing = try await target.admin(.GET, "/admin/v1/platforms/\(platform.uuid)")
            switch existing.status {
            case .ok:
                let view = existing.json.objectValue ?? [:]
                guard view["app_uuid"]?.stringValue == appUUID, view["type"]?.stringValue == type.rawValue else {
                    summary.notBrought(
                        "platform \(platform.uuid): the target has a platform with this uuid under another application or of another type\(lost)"
                    )
                    continue
                }
                summary.unchanged(.platforms)
                if view["credentials_status"]?.stringValue == CredentialsStatus.missing.rawValue {
                    noteCredentials(platform.uuid, type, &summary)
                }
            case .notFound:
                let body: JSONValue = .object([
                    "type": .string(type.rawValue), "name": .string(type.rawValue), "uuid": .string(platform.uuid),
                    "secret": .string(platform.secret),
                ])
                let created = try await target.admin(.POST, "/admin/v1/apps/\(appUUID)/platforms", body: body)
                guard created.status == .created else {
                    summary.notBrought("platform \(platform.uuid): the target refused it: \(created.errorMessage)\(lost)")
                    continue
                }
                summary.created(.platforms)
                noteCredentials(platform.uuid, type, &summary)
            default:
                throw TargetError(path: "GET /admin/v1/platforms/\(platform.uuid)", answer: existing)
            }
            brought.insert(platform.uuid)
        }
        let read = snapshot.devicesPerPlatform.values.reduce(0, +)
        if snapshot.devicesInAll > read {
            summary.notBrought(
                "\(snapshot.devicesInAll - read) devices of platforms not given with --platform UUID:SECRET (Pivotal never shows a platform's secret)"
            )
        }
        return brought
    }

    private func noteCredentials(_ uuid: String, _ type: PlatformType, _ summary: inout ImportSummary) {
        summary.note(
            "upload the provider credentials of \(type.rawValue) platform \(uuid) (PUT /admin/v1/platforms/\(uuid) with \"credentials\", docs/ADMIN_API.md): it sends nothing until then (Pivotal never shows them)"
        )
    }

    // MARK: Topics, locations, groups, geofences

    private func writeTopics(_ snapshot: Snapshot, _ summary: inout ImportSummary) async throws {
        var existing: [String: Int64?] = [:]
        try await targetPages("/v2/topics", key: "topics") { topic in
            if let name = topic["name"]?.stringValue { existing[name.lowercased()] = topic["expireAt"]?.lenientInt }
        }
        for topic in snapshot.topics {
            if let expiry = existing[topic.name.lowercased()] {
                if expiry == topic.expireAt {
                    summary.unchanged(.topics)
                } else {
                    summary.notBrought(
                        "topic '\(topic.name)': the target has it with another expiry (\(expiry.map(String.init) ?? "none"), the source says \(topic.expireAt.map(String.init) ?? "none")); a topic's expiry cannot be changed"
                    )
                }
                continue
            }
            var body: [String: JSONValue] = ["name": .string(topic.name)]
            if let expireAt = topic.expireAt { body["expireAt"] = .int(expireAt) }
            let created = try await target.app(.POST, "/v2/topics", body: .object(body))
            if created.ok {
                summary.created(.topics)
                existing[topic.name.lowercased()] = topic.expireAt
            } else {
                summary.notBrought("topic '\(topic.name)': the target refused it: \(created.errorMessage)")
            }
        }
    }

    /// Creates the locations the target lacks; each source location id's id in the target.
    private func writeLocations(_ snapshot: Snapshot, _ summary: inout ImportSummary) async throws -> [Int64: Int64] {
        var free: [String: [Int64]] = [:]
        try await targetPages("/v1/locations", key: "locations") { location in
            if let id = location["id"]?.lenientInt { free[Self.locationKey(location), default: []].append(id) }
        }
        var ids: [Int64: Int64] = [:]
        for location in snapshot.locations {
            guard let id = location["id"]?.lenientInt else { continue }
            let key = Self.locationKey(location)
            if let match = free[key]?.first {
                free[key]?.removeFirst()
                ids[id] = match
                summary.unchanged(.locations)
                continue
            }
            let body = location.filter { ["name", "lat", "long", "rad"].contains($0.key) }
            let created = try await target.app(.POST, "/v1/locations", body: .object(body))
            if created.ok, let newID = created.json.objectValue?["id"]?.lenientInt {
                ids[id] = newID
                summary.created(.locations)
            } else {
                summary.notBrought(
                    "location \(id) '\(location["name"]?.stringValue ?? "")': the target refused it: \(created.errorMessage)")
            }
        }
        return ids
    }

    private static func locationKey(_ location: [String: JSONValue]) -> String {
        ["name", "lat", "long", "rad"].map { (location[$0]?.lenientDouble).map { String($0) } ?? location[$0]?.jsonText ?? "" }
            .joined(separator: "\u{1F}")
    }

    private func writeGroups(_ snapshot: Snapshot, locationIDs: [Int64: Int64], _ summary: inout ImportSummary) async throws {
        try await writeByContent(
            snapshot.groups, listing: ("/v1/location_groups", "location_groups"), kind: .locationGroups,
            name: { "location group \($0["id"]?.jsonText ?? "?") '\($0["name"]?.stringValue ?? "")'" },
            content: Self.groupKey, fields: ["name", "description"], locationsField: "location_ids", locationIDs: locationIDs, &summary)
    }

    private static func groupKey(_ group: [String: JSONValue], _ ids: [Int64]) -> String {
        [group["name"]?.jsonText ?? "", group["description"]?.jsonText ?? "", ids.map(String.init).joined(separator: ",")]
            .joined(separator: "\u{1F}")
    }

    /// The ids of a list of locations, sorted, through `map` when given; nil if one is not in it.
    private static func locationIDs(_ value: JSONValue?, map: [Int64: Int64]?) -> [Int64]? {
        guard case .array(let locations)? = value else { return [] }
        var ids: [Int64] = []
        for location in locations {
            guard let id = location.objectValue?["id"]?.lenientInt ?? location.lenientInt else { return nil }
            if let map {
                guard let mapped = map[id] else { return nil }
                ids.append(mapped)
            } else {
                ids.append(id)
            }
        }
        return ids.sorted()
    }

    private func writeGeofences(_ snapshot: Snapshot, locationIDs: [Int64: Int64], _ summary: inout ImportSummary) async throws {
        try await writeByContent(
            snapshot.geofences, listing: ("/v1/geofence", "geofences"), kind: .geofences, name: { "geofence \($0["id"]?.jsonText ?? "?")" },
            content: Self.geofenceKey, fields: ["platform", "trigger_type", "start_time", "expiry_time", "tags", "data"],
            locationsField: "locations", locationIDs: locationIDs, &summary)
    }

    /// Creates the items of the source (groups, geofences: things made of locations, whose ids
    /// are the server's) that the target lacks, matched by content with their locations mapped
    /// to the target's; an item with a location that was not brought is not either.
    /// - Parameters:
    ///   - listing: the target's listing of such items, and the member holding them.
    ///   - name: how the summary names an item.
    ///   - content: an item's content with the given location ids, as one string.
    ///   - fields: the item's fields the creation sends, besides its locations in `locationsField`.
    private func writeByContent(
        _ items: [[String: JSONValue]], listing: (path: String, key: String), kind: ImportSummary.Kind,
        name: ([String: JSONValue]) -> String, content: ([String: JSONValue], [Int64]) -> String, fields: [String],
        locationsField: String, locationIDs: [Int64: Int64], _ summary: inout ImportSummary
    ) async throws {
        var free = Unclaimed()
        try await targetPages(listing.path, key: listing.key) { item in
            free.add(content(item, Self.locationIDs(item["locations"], map: nil) ?? []))
        }
        for item in items {
            guard let ids = Self.locationIDs(item["locations"], map: locationIDs) else {
                summary.notBrought("\(name(item)): one of its locations was not brought")
                continue
            }
            if free.take(content(item, ids)) {
                summary.unchanged(kind)
                continue
            }
            var body = item.filter { fields.contains($0.key) }
            body[locationsField] = .array(ids.map { .int($0) })
            let created = try await target.app(.POST, listing.path, body: .object(body))
            if created.ok {
                summary.created(kind)
            } else {
                summary.notBrought("\(name(item)): the target refused it: \(created.errorMessage)")
            }
        }
    }

    private static func geofenceKey(_ geofence: [String: JSONValue], _ ids: [Int64]) -> String {
        let tags: [String] = {
            guard case .array(let tags)? = geofence["tags"] else { return [] }
            return tags.compactMap(\.stringValue).sorted()
        }()
        return ["platform", "trigger_type", "start_time", "expiry_time", "data"].map { geofence[$0]?.jsonText ?? "" }
            .joined(separator: "\u{1F}") + "\u{1F}" + tags.joined(separator: ",") + "\u{1F}" + ids.map(String.init).joined(separator: ",")
    }

    /// Every object of one of the target's paged listings, with the application's credentials.
    private func targetPages(_ path: String, key: String, each: ([String: JSONValue]) throws -> Void) async throws {
        var page = 1
        while true {
            let answer = try await target.app(.GET, "\(path)?size=50&page=\(page)")
            guard answer.ok, let object = answer.json.objectValue, case .array(let items)? = object[key] else {
                throw TargetError(path: "GET \(path)", answer: answer)
            }
            for case .object(let item) in items { try each(item) }
            let pages = object["totalPages"]?.lenientInt ?? 1
            guard page < pages, !items.isEmpty else { return }
            page += 1
        }
    }
}

/// What the target has, counted by content (groups, geofences, schedules: their ids are the
/// server's): each item of the source that matches takes one.
struct Unclaimed {
    private var counts: [String: Int] = [:]

    mutating func add(_ key: String) {
        counts[key, default: 0] += 1
    }

    /// Whether one with this content was left, which is now taken.
    mutating func take(_ key: String) -> Bool {
        guard let count = counts[key], count > 0 else { return false }
        counts[key] = count - 1
        return true
    }
}

/// Why an import cannot go on, in words an operator can act on.
struct ImportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
