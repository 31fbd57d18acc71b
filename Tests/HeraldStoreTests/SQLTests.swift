import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Statements carry their binds positionally; each backend writes the placeholders its own way.
@Suite struct SQLTests {
    @Test func eachDialectWritesItsPlaceholders() {
        let sql: SQL = "SELECT * FROM t WHERE a = \(Int64(1)) AND b IN (\(list: ["x", "y"]))"
        #expect(sql.text(for: .postgres) == "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)")
        #expect(sql.text(for: .sqlite) == "SELECT * FROM t WHERE a = ?1 AND b IN (?2, ?3)")
        #expect(sql.binds == [.int(1), .text("x"), .text("y")])
    }

    @Test func fragmentsJoinInOrderWithoutRenumberingText() {
        let condition: SQL = "b = \("é€") AND c = \(Int64(3))"
        var sql: SQL = "UPDATE t SET a = \(Int64(2)) WHERE \(condition)"
        for index in 0..<11 { sql.append(", \(Int64(index))") }
        #expect(sql.text(for: .postgres).hasPrefix("UPDATE t SET a = $1 WHERE b = $2 AND c = $3, $4, $5"))
        #expect(sql.text(for: .postgres).hasSuffix(", $13, $14"))
        #expect(sql.text(for: .sqlite).hasSuffix(", ?13, ?14"))
        #expect(sql.binds.count == 14)
        #expect(sql.binds[1] == .text("é€"))
    }

    @Test func textWithoutBindsStaysAsWritten() {
        let sql = SQL(unsafeText: "SELECT '$1 ?'")
        #expect(sql.text(for: .sqlite) == "SELECT '$1 ?'")
        #expect(sql.isSelect)
        #expect(!("  \n insert INTO t VALUES (1)" as SQL).isSelect)
        #expect(("\n select 1" as SQL).isSelect)
    }

    @Test(arguments: Backend.available)
    func bindsReachTheDatabaseInOrder(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let inner: SQL = "\(Int64(2)) AS b, \("three") AS c"
            let rows = try await db.database.query("SELECT \(Int64(1)) AS a, \(inner), \(Int64(4)) AS d")
            #expect(try rows.first?.int("a") == 1)
            #expect(try rows.first?.int("b") == 2)
            #expect(try rows.first?.string("c") == "three")
            #expect(try rows.first?.int("d") == 4)
        }
    }
}
