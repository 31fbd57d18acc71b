import HeraldCore
import HeraldStore
import ServiceLifecycle

/// On PostgreSQL, hears the work other processes announce (`LISTEN herald_work`) and wakes this
/// process's sleepers of that kind, until a graceful shutdown. Not run on SQLite, where one
/// process owns the file and wakes its own sleepers.
struct WorkListenerService: Service {
    let work: WorkSignals

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            await work.listen()
        }
    }
}

extension WorkListenerService: RedactingDescription {
    /// Its name only: service-lifecycle logs each service it starts.
    package var description: String { "WorkListenerService" }
}
