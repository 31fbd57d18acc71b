import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// What `herald import` remembers of each device at its source.
@Suite struct ImportSnapshotRepositoryTests {
    /// A batch that names a device twice keeps its last snapshot, as two saves in a row would.
    /// PostgreSQL refused such an upsert (SQLSTATE 21000: a row affected twice in one
    /// statement), which reached the admin API as a 500.
    @Test(arguments: Backend.available)
    func aBatchNamingADeviceTwiceKeepsItsLastSnapshot(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let source = "https://pivotal.example.com"
            let device = "11111111-1111-4111-8111-111111111111"
            try await db.store.importSnapshots.save(
                applicationID: fixture.app.id, source: source,
                [
                    (deviceUUID: device, snapshot: "first"), (deviceUUID: "22222222-2222-4222-8222-222222222222", snapshot: "other"),
                    (deviceUUID: device, snapshot: "second"),
                ])
            let saved = try await db.store.importSnapshots.list(applicationID: fixture.app.id, source: source, after: "", limit: 10)
            #expect(saved.map(\.deviceUUID) == [device, "22222222-2222-4222-8222-222222222222"])
            #expect(saved.map(\.snapshot) == ["second", "other"])
        }
    }
}
