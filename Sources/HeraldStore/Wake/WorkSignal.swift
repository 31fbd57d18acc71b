import Synchronization

/// Wakes this process's loops that sleep on one kind of due work (`WorkKind`) when work of that
/// kind is added, here or (heard through `WorkSignals.listen`) in another process, so that it is
/// taken at once rather than at the loop's next due time or safety poll (`IdleWait`).
///
/// Use: read `generation` before looking for work; if there was none, `wait(after:upTo:)`. A
/// ring between the two is not missed: the wait then returns at once.
package final class WorkSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private enum Entry {
        case waiting(CheckedContinuation<Void, Never>)
        /// The waiter's task was cancelled before it registered its continuation.
        case cancelled
    }

    private let state = Mutex(State())

    package init() {}

    /// How many times the signal has rung.
    package var generation: UInt64 { state.withLock { $0.generation } }

    /// Waiters now waiting for a ring (for tests and diagnostics).
    package var waiting: Int {
        state.withLock { state in
            state.entries.values.count { entry in
                if case .waiting = entry { return true }
                return false
            }
        }
    }

    /// Wakes every waiter.
    package func ring() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation &+= 1
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, entry) in state.entries {
                guard case .waiting(let continuation) = entry else { continue }
                woken.append(continuation)
                state.entries[id] = nil
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once the signal has rung after `generation` (at once if it already has), when
    /// `timeout` has passed, or when the task is cancelled, whichever comes first.
    package func wait(after generation: UInt64, upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.rung(after: generation) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns once the signal has rung after `generation`, or the task is cancelled.
    private func rung(after generation: UInt64) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != generation { return true }
                    if case .cancelled = state.entries[id] {
                        state.entries[id] = nil
                        return true
                    }
                    state.entries[id] = .waiting(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if case .waiting(let continuation) = state.entries[id] {
                    state.entries[id] = nil
                    return continuation
                }
                state.entries[id] = .cancelled
                return nil
            }
            waiting?.resume()
        }
        // A cancellation that came after a ring had already resumed this waiter left a mark
        // that nothing will take.
        state.withLock { _ = $0.entries.removeValue(forKey: id) }
    }
}
