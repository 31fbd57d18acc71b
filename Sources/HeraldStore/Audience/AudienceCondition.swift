import HeraldCore

import struct Foundation.UUID

/// An audience expression compiled into a SQL condition over `devices d`, for the fan-out's
/// page query and the audience count: the database evaluates it row by row while it pages, so
/// no audience is ever held in memory.
///
/// Every leaf is a test that is true or false, never NULL (columns that may be NULL are
/// compared through `COALESCE`), so that `NOT` excludes exactly what its operand includes:
///
/// | leaf | condition |
/// |---|---|
/// | `topic` | `(SELECT 1 FROM device_tags t WHERE t.device_id = d.id AND t.tag = ? LIMIT 1) IS NOT NULL`, or `1 = 0` for a topic that is not live |
/// | `platform` (type) | `d.platform_type = ?` |
/// | `platform` (uuid) | `d.platform_id = ?` |
/// | `custom_user_id` | `COALESCE(d.custom_user_id, '') = ?` |
/// | `device` | `d.uuid = ?` |
/// | `time_zone` | `COALESCE(d.time_zone, '') = ?` |
/// | `os` | `LOWER(d.os) = ?` |
///
/// Every value is bound as a parameter, never written into the statement's text. The same
/// text serves SQLite and PostgreSQL: each construct used is in both dialects, with the same
/// meaning (lower-casing is ASCII-only on SQLite; the SDKs' `os` values are ASCII).
struct AudienceCondition: Sendable {
    /// The condition, over `devices d`.
    let sql: SQL
    /// Compiles `expression`; `liveTopics` are the named topics that exist and have not expired
    /// (`PushRepository.liveTopics`): the others match no device.
    init(_ expression: AudienceExpression, liveTopics: Set<String>) {
        self.sql = Self.condition(expression, liveTopics: liveTopics)
    }

    /// The topic names the expression's leaves test.
    static func topics(of expression: AudienceExpression) -> [String] {
        var names = Set<String>()
        for case .topic(let name) in expression.leaves { names.insert(name) }
        return names.sorted()
    }

    // MARK: Compiling

    private static func condition(_ expression: AudienceExpression, liveTopics: Set<String>) -> SQL {
        switch expression {
        case .and(let operands):
            return joined(operands, with: " AND ", liveTopics: liveTopics)
        case .or(let operands):
            return joined(operands, with: " OR ", liveTopics: liveTopics)
        case .not(let operand):
            return "NOT (\(condition(operand, liveTopics: liveTopics)))"
        case .leaf(let leaf):
            return condition(leaf, liveTopics: liveTopics)
        }
    }

    private static func joined(_ operands: [AudienceExpression], with separator: String, liveTopics: Set<String>) -> SQL {
        var out: SQL = "("
        for (index, operand) in operands.enumerated() {
            if index > 0 { out.append(SQL(unsafeText: separator)) }
            out.append(condition(operand, liveTopics: liveTopics))
        }
        out.append(")")
        return out
    }

    private static func condition(_ leaf: AudienceLeaf, liveTopics: Set<String>) -> SQL {
        switch leaf {
        case .topic(let name):
            // Checked against the live topics beforehand: an expired topic reaches no one, as
            // in a topic push.
            guard liveTopics.contains(name) else { return "1 = 0" }
            // A scalar subquery, not EXISTS: PostgreSQL turns an EXISTS into a join or a hashed
            // subplan that reads the tag's every subscription (500,000 rows for a page of 1,000
            // in EXPLAIN ANALYZE), where this is one probe of device_tags' primary key per row.
            return "(SELECT 1 FROM device_tags t WHERE t.device_id = d.id AND t.tag = \(name) LIMIT 1) IS NOT NULL"
        case .platformType(let type): return "d.platform_type = \(type.rawValue)"
        case .platform(let id): return "d.platform_id = \(id)"
        case .customUserID(let id): return "COALESCE(d.custom_user_id, '') = \(id)"
        case .device(let id): return "d.uuid = \(id)"
        case .timeZone(let zone): return "COALESCE(d.time_zone, '') = \(zone)"
        case .os(let os): return "LOWER(d.os) = \(os)"
        }
    }
}
