import HeraldCore

import struct Foundation.UUID

extension DeviceRepository {
    /// The distinct custom user ids of the application's devices, sorted; with `query`, only
    /// those containing it, compared case-sensitively as the ids are.
    package func customUserIDs(applicationID: UUID, containing query: String?) async throws -> [String] {
        var condition: SQL = "app_id = \(applicationID) AND custom_user_id IS NOT NULL"
        if let query, !query.isEmpty {
            // LIKE ignores case in SQLite: a substring position compares exactly on both backends.
            let function = database.dialect == .postgres ? "strpos" : "instr"
            condition.append(" AND \(unsafeRaw: function)(custom_user_id, \(query)) > 0")
        }
        return try await database.query(
            "SELECT DISTINCT custom_user_id FROM devices WHERE \(condition) ORDER BY custom_user_id"
        ).map { try $0.string("custom_user_id") }
    }
}
