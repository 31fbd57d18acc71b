import struct Foundation.UUID

extension PushRepository {
    /// Lets one batch of a throttled push start sending now, and the next only a second later.
    ///
    /// Returns nil when the batch may go (the push is not throttled, or its second has come: the
    /// gate moves a second on, atomically, so two workers never both pass), or else when it may
    /// try again (epoch ms).
    package func takeSendSlot(pushID: UUID) async throws -> Int64? {
        let gate = try await database.query("SELECT next_at FROM push_rates WHERE push_id = \(pushID)")
        guard gate.first != nil else { return nil }
        let time = clock.now.epochMilliseconds
        let taken = try await database.query(
            "UPDATE push_rates SET next_at = \(time + 1000) WHERE push_id = \(pushID) AND next_at <= \(time) RETURNING push_id")
        if !taken.isEmpty { return nil }
        let next = try await database.query("SELECT next_at FROM push_rates WHERE push_id = \(pushID)").first?.int("next_at") ?? time
        return max(next, time + 1)
    }

    /// Gives a push its send gate (once; later calls keep the first rate).
    static func throttle(_ connection: any SQLExecutor, pushID: UUID, perSecond: Int) async throws {
        try await connection.query(
            """
            INSERT INTO push_rates (push_id, per_second, next_at) VALUES (\(pushID), \(perSecond), 0)
            ON CONFLICT (push_id) DO NOTHING
            """)
    }
}
