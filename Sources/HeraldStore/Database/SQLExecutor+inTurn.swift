extension SQLExecutor {
    /// Runs `count` statements one after another, the `index`-th written by `statement(index)`,
    /// and returns their rows in that order. Each statement is written while the one before
    /// runs: on SQLite the writer's statements run on a thread of the pool while this task's
    /// thread writes the next (a large import's multi-row statements cost about as much to
    /// write in Swift as their bound values take SQLite to store; written between them, the
    /// two waited for each other: BENCHMARKS.md, device import, fourth pass). The statements
    /// still run in order, never two at once, so a transaction's connection sees them as if
    /// run by a plain loop; the first that fails stops the rest and its error is thrown.
    func queryInTurn(_ count: Int, _ statement: (Int) throws -> SQL) async throws -> [[SQLRow]] {
        guard count > 0 else { return [] }
        return try await withThrowingTaskGroup(of: [SQLRow].self) { group in
            var results: [[SQLRow]] = []
            results.reserveCapacity(count)
            for index in 0..<count {
                let sql = try statement(index)
                if let rows = try await group.next() { results.append(rows) }
                group.addTask { try await self.query(sql) }
            }
            while let rows = try await group.next() { results.append(rows) }
            return results
        }
    }
}
