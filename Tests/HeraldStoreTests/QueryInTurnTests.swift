import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldStore

/// `SQLExecutor.queryInTurn`: statements written while the one before runs still run one at a
/// time, in order, inside the transaction; the first that fails stops the rest.
@Suite struct QueryInTurnTests {
    /// The last statement a test's closure wrote (its number from 1), read after the transaction.
    final class Written: Sendable {
        let count = Mutex(0)
    }

    /// Each statement sees what the ones before it wrote (they ran in order, never two at
    /// once), and the rows come back in the statements' order.
    @Test(arguments: Backend.available)
    func statementsRunInOrderAndAnswerInOrder(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let ids = (0..<40).map { _ in UUID() }
            let answers = try await db.database.transaction { connection in
                try await connection.queryInTurn(ids.count) { index in
                    // The name is how many tenants the statements before this one created.
                    "INSERT INTO tenants (id, name, created_at) SELECT \(ids[index]), 'n' || COUNT(*), \(index) FROM tenants RETURNING name"
                }
            }
            #expect(answers.map { try? $0.first?.string("name") } == (0..<40).map { "n\($0)" })
        }
    }

    /// A statement that fails stops those after it (none of them runs) and its error reaches
    /// the caller, so that the transaction rolls back whole.
    @Test(arguments: Backend.available)
    func theFirstFailureStopsTheRest(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let taken = UUID()
            try await db.database.query("INSERT INTO tenants (id, name, created_at) VALUES (\(taken), 'taken', 0)")
            let written = Written()
            let error = await #expect(throws: StoreError.self) {
                try await db.database.transaction { connection in
                    _ = try await connection.queryInTurn(10) { index in
                        written.count.withLock { $0 = index + 1 }
                        return "INSERT INTO tenants (id, name, created_at) VALUES (\(index == 4 ? taken : UUID()), \("t\(index)"), 0)"
                    }
                }
            }
            #expect(error?.reason == .uniqueViolation)
            // The fifth failed while the sixth was being written; no seventh was written.
            #expect(written.count.withLock { $0 } == 6)
            #expect(try await db.database.query("SELECT name FROM tenants").map { try $0.string("name") } == ["taken"])
        }
    }
}
