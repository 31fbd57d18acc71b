import Synchronization

/// How many delivery workers this process should run and how many run now, for `/readyz`.
package final class DeliveryWorkerStatus: Sendable {
    /// Workers the configuration asks for (0: an API-only process).
    package let expected: Int
    private let running = Atomic<Int>(0)

    package init(expected: Int) {
        self.expected = max(0, expected)
    }

    /// Workers running right now.
    package var runningWorkers: Int { running.load(ordering: .relaxed) }

    /// Ready when no worker is expected, or at least one runs.
    package var isReady: Bool { expected == 0 || runningWorkers > 0 }

    func started() { running.add(1, ordering: .relaxed) }

    func stopped() { running.subtract(1, ordering: .relaxed) }
}
