import DequeModule
import Synchronization

/// A counting semaphore for async code: at most `permits` holders at once, served in order.
final class AsyncSemaphore: Sendable {
    private struct State {
        var permits: Int
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
    }

    private let state: Mutex<State>

    init(permits: Int) {
        self.state = Mutex(State(permits: permits))
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.permits > 0 {
                    state.permits -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func signal() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let first = state.waiters.popFirst() { return first }
            state.permits += 1
            return nil
        }
        next?.resume()
    }

    /// Runs `body` holding one permit.
    func withPermit<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        await wait()
        defer { signal() }
        return try await body()
    }
}
