import Crypto
import Foundation
import HeraldCommandLine
import HeraldCore
import NIOCore

extension PivotalImport {
    // MARK: Devices

    /// The fields that make a device what it is, compared between the source and the target.
    private static let deviceFields = [
        "platform_uuid", "os", "os_version", "device_model", "device_manufacturer", "device_alias", "registration_token",
        "custom_user_id", "active",
    ]

    /// Sends the import endpoint the devices the target lacks or has otherwise, in batches, and
    /// counts those it has already as they are. A device the previous run saw at the source
    /// (its snapshot on the target) is written only when the source changed it since, and then
    /// only the fields (and tags) the source changed, over what the target has: what the device
    /// did on Herald meanwhile stays.
    func writeDevices(_ snapshot: Snapshot, platforms: Set<String>, _ summary: inout ImportSummary) async throws {
        let decoder = JSONDecoder()
        let previous = try await target.snapshots(app: appUUID, source: source.base)
        // The target's devices by uuid, each as a 64-bit fingerprint: 1,000,000 of them take tens
        // of megabytes, where their fields as text took about 200. Their lines wait in a file,
        // read back for a device the source changed.
        var known: [UUID: UInt64] = [:]
        var lineAt: [UUID: (offset: UInt64, count: Int)] = [:]
        // What the target has that the source does not show, kept when a device is written again.
        var kept: [UUID: [String: JSONValue]] = [:]
        let unshown = Self.unshownFields(customUserIDsShown: snapshot.customUserIDsShown)
        let targetSpool = spool + ".target"
        guard FileManager.default.createFile(atPath: targetSpool, contents: nil), let targetOut = FileHandle(forWritingAtPath: targetSpool)
        else {
            throw ImportError("cannot write the device spool \(targetSpool)")
        }
        defer { try? FileManager.default.removeItem(atPath: targetSpool) }
        var offset: UInt64 = 0
        try await target.exportDevices(app: appUUID) { line in
            guard let object = try? decoder.decode(JSONValue.self, from: Data(line.utf8)).objectValue,
                let uuid = object["device_uuid"]?.stringValue.flatMap(UUID.init(uuidString:))
            else { return }
            known[uuid] = Self.fingerprint(object)
            let values = object.filter { unshown.contains($0.key) && $0.value != .null }
            if !values.isEmpty { kept[uuid] = values }
            let bytes = Data(line.utf8)
            try targetOut.write(contentsOf: bytes)
            lineAt[uuid] = (offset, bytes.count)
            offset += UInt64(bytes.count)
        }
        try targetOut.close()
        guard let targetIn = FileHandle(forReadingAtPath: targetSpool) else {
            throw ImportError("cannot read the device spool \(targetSpool)")
        }
        defer { try? targetIn.close() }
        func targetLine(_ uuid: UUID) throws -> [String: JSONValue]? {
            guard let at = lineAt[uuid] else { return nil }
            try targetIn.seek(toOffset: at.offset)
            return try (targetIn.read(upToCount: at.count)).flatMap { try? decoder.decode(JSONValue.self, from: $0).objectValue }
        }
        guard let file = FileHandle(forReadingAtPath: spool) else { throw ImportError("cannot read the device spool \(spool)") }
        defer { try? file.close() }

        let toSend = snapshot.devicesPerPlatform.filter { platforms.contains($0.key) }.values.reduce(0, +)
        var progress = TransferProgress(verb: "imported", total: Int64(toSend), quiet: quiet)
        var batch = ByteBuffer()
        var batchUUIDs: [String] = []
        // The source's view of each device in `batch`, saved once the target has taken it.
        var batchSeen: [JSONValue] = []
        var seenToSave: [(String, JSONValue)] = []
        var seen = 0
        var pending = Data()
        var createdOrUpdated = false
        func saveSeen(force: Bool) async throws {
            guard !seenToSave.isEmpty, force || seenToSave.count >= HeraldTarget.snapshotsPerRequest else { return }
            try await target.saveSnapshots(app: appUUID, source: source.base, seenToSave)
            seenToSave.removeAll(keepingCapacity: true)
        }
        func flush(_ summary: inout ImportSummary) async throws {
            guard !batchUUIDs.isEmpty else { return }
            let answer = try await target.importDevices(app: appUUID, ndjson: batch)
            guard answer.ok, let report = answer.json.objectValue else {
                throw TargetError(path: "POST /admin/v1/apps/\(appUUID)/devices/import", answer: answer)
            }
            let imported = Int(report["imported"]?.lenientInt ?? 0)
            let updated = Int(report["updated"]?.lenientInt ?? 0)
            summary.created(.devices, imported)
            summary.updated(.devices, updated)
            createdOrUpdated = createdOrUpdated || imported + updated > 0
            var rejectedLines: Set<Int> = []
            if case .array(let rejections)? = report["rejections"] {
                for case .object(let rejection) in rejections {
                    let line = Int(rejection["line"]?.lenientInt ?? 0)
                    rejectedLines.insert(line)
                    let uuid = (1...batchUUIDs.count).contains(line) ? batchUUIDs[line - 1] : "?"
                    var reason = rejection["message"]?.stringValue ?? "rejected"
                    if let field = rejection["field"]?.stringValue { reason += " (field \(field))" }
                    summary.notBrought("device \(uuid): the target rejected it: \(reason)")
                }
            }
            let rejected = Int(report["rejected"]?.lenientInt ?? 0)
            let listed = (report["rejections"].flatMap { if case .array(let list) = $0 { list.count } else { nil } }) ?? 0
            if rejected > listed { summary.notBrought("\(rejected - listed) more devices rejected by the target (not listed)") }
            // A rejected device is not remembered as seen, so the next run tries it again; when
            // some were not listed, none of the batch is.
            if rejected == listed {
                for (index, uuid) in batchUUIDs.enumerated() where !rejectedLines.contains(index + 1) {
                    seenToSave.append((uuid, batchSeen[index]))
                    try await saveSeen(force: false)
                }
            }
            progress.advance(bytes: batchUUIDs.count, lines: batchUUIDs.count)
            batch.clear()
            batchUUIDs.removeAll(keepingCapacity: true)
            batchSeen.removeAll(keepingCapacity: true)
        }

        while true {
            let chunk = try file.read(upToCount: 1 << 20) ?? Data()
            pending.append(chunk)
            var lines = pending.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            if !chunk.isEmpty, pending.last != UInt8(ascii: "\n"), let last = lines.popLast() {
                pending = Data(last)
            } else {
                pending = Data()
            }
            for line in lines {
                guard let device = try? decoder.decode(JSONValue.self, from: Data(line)).objectValue,
                    let uuid = device["device_uuid"]?.stringValue?.lowercased(),
                    let platform = device["platform_uuid"]?.stringValue, platforms.contains(platform)
                else { continue }
                seen += 1
                // The device as the source shows it now.
                var shown = Self.importLine(
                    device, type: snapshot.platformTypes[platform], tags: snapshot.tagsShown ? nil : snapshot.tagsByDevice[uuid] ?? [])
                if !snapshot.customUserIDsShown, let id = snapshot.recovered.byDevice[uuid] {
                    shown["custom_user_id"] = .string(id)
                }
                let key = UUID(uuidString: uuid)
                let before = previous[uuid].flatMap { try? decoder.decode(JSONValue.self, from: Data($0.utf8)).objectValue }
                let targetPrint = key.flatMap { known.removeValue(forKey: $0) }
                var write: [String: JSONValue]
                if let key, let targetPrint, let before {
                    let unchangedAtSource = Self.fingerprint(before) == Self.fingerprint(shown)
                    if !unchangedAtSource, let current = try targetLine(key) {
                        write = Self.applying(from: before, to: shown, on: current)
                    } else {
                        write = [:]
                    }
                    if unchangedAtSource || write.isEmpty || Self.fingerprint(write) == targetPrint {
                        summary.unchanged(.devices)
                        progress.advance(bytes: 1, lines: 1)
                        if !unchangedAtSource { seenToSave.append((uuid, .object(shown))) }
                        try await saveSeen(force: false)
                        continue
                    }
                } else {
                    // Not seen before (a new device, or one a previous version brought): the
                    // source's fields, and never null over a value the source does not show.
                    write = shown
                    if let key, let values = kept[key] {
                        for (field, value) in values where write[field] == nil { write[field] = value }
                    }
                    if let targetPrint, targetPrint == Self.fingerprint(write) {
                        summary.unchanged(.devices)
                        progress.advance(bytes: 1, lines: 1)
                        seenToSave.append((uuid, .object(shown)))
                        try await saveSeen(force: false)
                        continue
                    }
                }
                if let key { kept[key] = nil }
                batch.writeString(JSONValue.object(write).jsonText)
                batch.writeString("\n")
                batchUUIDs.append(uuid)
                batchSeen.append(.object(shown))
                if batchUUIDs.count >= Self.devicesPerImport { try await flush(&summary) }
            }
            if chunk.isEmpty { break }
        }
        try await flush(&summary)
        try await saveSeen(force: true)
        progress.finish()

        if !known.isEmpty {
            summary.note(
                "the target has \(known.count) devices of this application that the source does not show; they were left as they are")
        }
        if !snapshot.customUserIDsShown && !snapshot.customUserIDs.isEmpty {
            let recovered = snapshot.recovered
            summary.note(
                "custom user ids: the source's registrations do not show them; \(Set(recovered.byDevice.values).count) of the \(snapshot.customUserIDs.count) listed by /v2/custom_user_ids were given back to their \(recovered.byDevice.count) devices through /v2/registrations?q="
            )
            if recovered.unresolvedIDs > 0 {
                summary.notBrought(
                    "custom user ids: \(recovered.unresolvedIDs) of \(snapshot.customUserIDs.count) could not be told apart (their text is also in another id, or in a token, alias or device uuid); \(recovered.undecidedDevices.count) devices they may belong to keep the one they have, and get theirs when they register again"
                )
            }
        }
        if createdOrUpdated {
            summary.notBrought(
                "device time zones: /v2/registrations does not show them; each comes back with its device's next registration (pushes at a local time reach a device once it has)"
            )
        }
    }

    /// The target's device `current` with what the source changed from `before` to `now`: each
    /// field it changed (one it no longer shows is left), and the tags it added or removed.
    static func applying(
        from before: [String: JSONValue], to now: [String: JSONValue], on current: [String: JSONValue]
    ) -> [String: JSONValue] {
        var line = current
        for field in deviceFields where before[field] != now[field] {
            if let value = now[field] { line[field] = value }
        }
        func tags(_ device: [String: JSONValue]) -> Set<String>? {
            guard case .array(let list)? = device["tags"] else { return nil }
            return Set(list.compactMap { ($0.stringValue ?? $0.objectValue?["text"]?.stringValue)?.lowercased() })
        }
        if let old = tags(before), let new = tags(now), old != new {
            let result = (tags(current) ?? []).subtracting(old.subtracting(new)).union(new.subtracting(old))
            line["tags"] = .array(result.sorted().map { .string($0) })
        }
        return line
    }

    /// The fields of a target's device that the source does not show: a device's line keeps
    /// the target's where the source's has none (time zone, quiet time, badge and first
    /// registration never come from Pivotal; custom user ids only when its registrations show them).
    static func unshownFields(customUserIDsShown: Bool) -> Set<String> {
        var fields: Set<String> = ["time_zone", "quiet_time", "badge", "created_at"]
        if !customUserIDsShown { fields.insert("custom_user_id") }
        return fields
    }

    /// A registration as an import line: its fields, tags as a list of strings, the token as
    /// the target stores it (an APNs token in lower case, as registering makes it).
    /// - Parameters:
    ///   - type: the type of the device's platform.
    ///   - tags: the device's tags when the registration does not show them.
    static func importLine(_ device: [String: JSONValue], type: PlatformType?, tags: [String]?) -> [String: JSONValue] {
        var line = device.filter { deviceFields.contains($0.key) || $0.key == "device_uuid" }
        if type == .ios, case .string(let token)? = line["registration_token"] {
            line["registration_token"] = .string(token.trimmingCharacters(in: .whitespaces).lowercased())
        }
        if case .string(let active)? = line["active"] { line["active"] = .bool(active.lowercased() != "false") }
        if let tags {
            line["tags"] = .array(tags.map { .string($0) })
        } else if case .array(let shown)? = device["tags"] {
            line["tags"] = .array(shown.compactMap { $0.stringValue ?? $0.objectValue?["text"]?.stringValue }.map { .string($0) })
        }
        return line
    }

    /// The device's fields and sorted tags, digested to 64 bits, to tell whether two devices are
    /// the same: two different devices agree by chance once in 2⁶⁴ comparisons.
    static func fingerprint(_ device: [String: JSONValue]) -> UInt64 {
        SHA256.hash(data: Array(fingerprintText(device).utf8)).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// The device's fields and sorted tags as one string.
    private static func fingerprintText(_ device: [String: JSONValue]) -> String {
        var parts = deviceFields.map { field -> String in
            switch device[field] {
            case nil, .null?: return "null"
            case let value?: return value.jsonText
            }
        }
        var tags: [String] = []
        if case .array(let list)? = device["tags"] {
            tags = list.compactMap { ($0.stringValue ?? $0.objectValue?["text"]?.stringValue)?.lowercased() }.sorted()
        }
        parts.append(JSONValue.array(tags.map { .string($0) }).jsonText)
        return parts.joined(separator: "\u{1F}")
    }

    // MARK: Schedules

    /// Schedules the pushes the target lacks, under the `schedule_id` they have on the source
    /// (`PUT /admin/v1/apps/:app/schedules/:id`, checked as `POST /v1/push` checks a push), so a
    /// backend holding that id can still change or cancel it; one whose id Herald cannot keep
    /// goes through `POST /v1/push` and the summary gives its new id.
    func writeSchedules(_ snapshot: Snapshot, _ summary: inout ImportSummary) async throws {
        let answer = try await target.app(.GET, "/v1/schedules")
        guard answer.ok, case .array(let list) = answer.json else { throw TargetError(path: "GET /v1/schedules", answer: answer) }
        var free = Unclaimed()
        var ids: Set<String> = []
        for case .object(let schedule) in list {
            if let id = schedule["schedule_id"]?.stringValue { ids.insert(id.lowercased()) }
        }
        for case .object(let schedule) in list {
            free.add(Self.scheduleKey(schedule))
        }
        var created = 0
        for schedule in snapshot.schedules {
            let id = schedule["schedule_id"]?.stringValue ?? "?"
            let keepable = id.count == 16 && id.allSatisfy(\.isHexDigit)
            if keepable && ids.contains(id.lowercased()) {
                summary.unchanged(.schedules)
                _ = free.take(Self.scheduleKey(schedule))
                continue
            }
            if free.take(Self.scheduleKey(schedule)) {
                summary.unchanged(.schedules)
                continue
            }
            guard let push = schedule["push"]?.objectValue else {
                summary.notBrought("schedule \(id): the source shows no push")
                continue
            }
            if let due = schedule["scheduled_for"]?.lenientInt, due <= clock.now.advanced(by: .seconds(60)).epochMilliseconds {
                summary.notBrought("schedule \(id): due within a minute; left to the source, which sends it")
                continue
            }
            if keepable {
                let kept = try await target.admin(.PUT, "/admin/v1/apps/\(appUUID)/schedules/\(id.lowercased())", body: .object(push))
                if kept.ok {
                    summary.created(.schedules)
                    created += 1
                    continue
                }
                guard kept.status == .conflict else {
                    summary.notBrought("schedule \(id): the target refused it: \(kept.errorMessage)")
                    continue
                }
            }
            let sent = try await target.app(.POST, "/v1/push", body: .object(push))
            if sent.ok, let newID = sent.json.objectValue?["schedule_id"]?.stringValue {
                summary.created(.schedules)
                created += 1
                summary.note(
                    "schedule \(id) is \(newID) on the target (\(keepable ? "its id is taken there" : "not an id Herald can keep")): use that id for GET/PUT/DELETE /v1/schedules"
                )
            } else {
                summary.notBrought("schedule \(id): the target refused it: \(sent.errorMessage)")
            }
        }
        if created > 0 {
            summary.note("cancel the \(created) schedules brought on the source (or stop it) before they fall due, or each is sent twice")
        }
    }

    /// A schedule's time and push, with what a server adds or drops on storing it taken out.
    private static func scheduleKey(_ schedule: [String: JSONValue]) -> String {
        var push = schedule["push"]?.objectValue ?? [:]
        push["scheduleIn"] = nil
        push = push.filter { $0.value != .null }
        return (schedule["scheduled_for"]?.jsonText ?? "") + "\u{1F}" + JSONValue.object(push).jsonText
    }
}
