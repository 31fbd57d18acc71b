import HeraldCore
import HeraldStore
import ServiceLifecycle

/// Keeps the database open while the server runs and closes it after a graceful shutdown.
struct DatabaseService: Service {
    let database: any SQLDatabase

    func run() async throws {
        try? await gracefulShutdown()
        await database.shutdown()
    }
}

extension DatabaseService: RedactingDescription {
    /// Its name only: service-lifecycle logs each service it starts, and the default description
    /// would walk the whole store and every provider client it holds.
    package var description: String { "DatabaseService" }
}
