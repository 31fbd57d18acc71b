import Foundation
import HeraldCore

extension PivotalImport {
    /// Custom user ids given back to the devices whose registrations do not show them.
    struct RecoveredCustomUserIDs {
        /// The custom user id of each device told apart, by lower-case device uuid.
        var byDevice: [String: String] = [:]
        /// Listed ids not every one of whose devices could be told apart.
        var unresolvedIDs = 0
        /// Devices one of those ids might belong to, left without one.
        var undecidedDevices: Set<String> = []
    }

    /// A registration as `q` matches it: `q` returns the registrations "containing the query
    /// string in either the deviceUuid, the registration token, the custom user id, or the
    /// device alias" (Pivotal's API documentation).
    private struct Match {
        var uuid: String
        /// The uuid, token and alias, lower-cased: what a match may have come from besides the
        /// custom user id.
        var shown: [String]
    }

    /// Asks the source which devices each listed custom user id matches
    /// (`/v2/registrations?q=ID`, `pagesInFlight` ids at once), and keeps the devices whose id
    /// that can only be: a device matched by `X` whose uuid, token and alias do not contain `X`
    /// holds a custom user id containing `X`; unless it also matches a longer listed id that
    /// contains `X`, that id is `X` itself. Every other device matched stays undecided, since
    /// the source would have matched it for another reason.
    func recoverCustomUserIDs(_ ids: [String]) async throws -> RecoveredCustomUserIDs {
        var matches: [String: [Match]] = [:]
        var pending = ids[...]
        let source = self.source
        @Sendable func ask(_ id: String) async throws -> (String, [Match]) {
            let query = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
            var found: [Match] = []
            // One id at a time: the ids already run `pagesInFlight` at once.
            var single = source
            single.pagesInFlight = 1
            try await single.pages("/v2/registrations?q=\(query)", key: "registrations") { items, _ in
                for case .object(let device) in items {
                    guard let uuid = device["device_uuid"]?.stringValue?.lowercased() else { continue }
                    let shown = ["device_uuid", "registration_token", "device_alias"].compactMap { device[$0]?.stringValue?.lowercased() }
                    found.append(Match(uuid: uuid, shown: shown))
                }
            }
            return (id, found)
        }
        try await withThrowingTaskGroup(of: (String, [Match]).self) { group in
            for _ in 0..<max(1, source.pagesInFlight) {
                guard let id = pending.popFirst() else { break }
                group.addTask { try await ask(id) }
            }
            while let (id, found) = try await group.next() {
                matches[id] = found
                if let id = pending.popFirst() { group.addTask { try await ask(id) } }
            }
        }

        var recovered = RecoveredCustomUserIDs()
        var claims: [String: [String]] = [:]
        var undecided: [String: [String]] = [:]
        let lowered = Dictionary(ids.map { ($0, $0.lowercased()) }, uniquingKeysWith: { first, _ in first })
        for id in ids {
            let needle = lowered[id] ?? id.lowercased()
            // Longer listed ids containing this one: their devices match it too.
            let longer = ids.filter { $0 != id && (lowered[$0] ?? $0).contains(needle) }
            let theirs = Set(longer.flatMap { matches[$0]?.map(\.uuid) ?? [] })
            for match in matches[id] ?? [] {
                if theirs.contains(match.uuid) || match.shown.contains(where: { $0.contains(needle) }) {
                    undecided[id, default: []].append(match.uuid)
                } else {
                    claims[match.uuid, default: []].append(id)
                }
            }
        }
        for (uuid, ids) in claims where ids.count == 1 {
            // More than one: the source changed between the questions; the device stays undecided.
            recovered.byDevice[uuid] = ids[0]
        }
        for id in ids {
            // An id is told apart when each device it matched is decided, by it or by another.
            let open = (undecided[id] ?? []).filter { recovered.byDevice[$0] == nil }
            if open.isEmpty && !(matches[id] ?? []).isEmpty { continue }
            recovered.unresolvedIDs += 1
            recovered.undecidedDevices.formUnion(open)
        }
        for (uuid, ids) in claims where ids.count > 1 { recovered.undecidedDevices.insert(uuid) }
        return recovered
    }
}
