/// What an import wrote to the target, kind by kind, and what it could not bring and why.
struct ImportSummary: Sendable {
    enum Kind: String, CaseIterable, Sendable {
        case application, platforms, topics, locations
        case locationGroups = "location groups"
        case geofences, devices, schedules
    }

    struct Counts: Sendable {
        var created = 0
        var updated = 0
        var unchanged = 0
    }

    private(set) var counts: [Kind: Counts] = [:]
    /// What was not brought, each with its reason.
    private(set) var notBrought: [String] = []
    /// What the operator should know or do next.
    private(set) var notes: [String] = []

    mutating func created(_ kind: Kind, _ count: Int = 1) { counts[kind, default: Counts()].created += count }
    mutating func updated(_ kind: Kind, _ count: Int = 1) { counts[kind, default: Counts()].updated += count }
    mutating func unchanged(_ kind: Kind, _ count: Int = 1) { counts[kind, default: Counts()].unchanged += count }
    mutating func notBrought(_ text: String) { notBrought.append(text) }
    mutating func note(_ text: String) { notes.append(text) }

    /// Whether anything was written to the target.
    var wroteAnything: Bool {
        counts.values.contains { $0.created + $0.updated > 0 }
    }

    /// The summary as printed: one line a kind, then what was not brought, then the notes.
    /// - Parameter failure: why the import stopped, if it did.
    func text(failure: String?) -> String {
        var lines: [String] = []
        if let failure {
            lines.append("Import stopped: \(failure)")
            lines.append(wroteAnything ? "Written to the target before it stopped:" : "Nothing was written to the target.")
        } else {
            lines.append(wroteAnything ? "Imported:" : "Nothing changed: the target already had everything the source showed.")
        }
        for kind in Kind.allCases {
            guard let count = counts[kind] else { continue }
            guard failure == nil || count.created + count.updated > 0 else { continue }
            var parts = ["\(count.created) created"]
            if kind == .devices { parts.append("\(count.updated) updated") }
            parts.append("\(count.unchanged) unchanged")
            lines.append("  \(kind.rawValue): " + parts.joined(separator: ", "))
        }
        if !notBrought.isEmpty {
            lines.append("Not brought (\(notBrought.count)):")
            lines += notBrought.map { "  - " + $0 }
        }
        if !notes.isEmpty {
            lines.append("Next:")
            lines += notes.map { "  - " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}
