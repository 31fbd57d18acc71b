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
