import NIOCore
import NIOPosix

/// A task executor with a thread of its own.
///
/// The write paths (SQLite's group commit, the registration batcher) run their drain loops here:
/// on the shared cooperative pool, each resumption after a database round trip would wait behind
/// every queued request handler, and a batch would take several times longer than its SQL.
package final class DedicatedExecutor: TaskExecutor {
    /// The thread, as an event-loop group (PostgreSQL's connections live on it: see
    /// `PostgresStoreDatabase`).
    let group: MultiThreadedEventLoopGroup
    private let loop: any EventLoop

    package init() {
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loop = group.next()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }

    /// Stops the thread; work enqueued afterwards is dropped.
    package func shutdown() async {
        try? await group.shutdownGracefully()
    }
}
