import Synchronization

import struct Foundation.UUID

/// The recent activity of each application, in memory, and live subscriptions to it.
///
/// Each application keeps its last `capacity` events (a ring: the oldest go first); the log is
/// lost on restart, which is acceptable for a live view. Recording never waits: a subscriber
/// that reads slower than events come loses its oldest unread events, not the sender its time.
package final class ActivityLog: Sendable {
    /// Events kept per application.
    package let capacity: Int
    /// Unread events held per subscriber before the oldest are dropped.
    package let subscriberBuffer: Int
    private let state = Mutex(State())

    private struct State {
        var recent: [UUID: Ring] = [:]
        var subscribers: [UUID: [UUID: AsyncStream<ActivityEvent>.Continuation]] = [:]
    }

    /// A fixed-size buffer of the newest events.
    private struct Ring {
        var events: [ActivityEvent] = []
        var next = 0

        mutating func append(_ event: ActivityEvent, capacity: Int) {
            if events.count < capacity {
                events.append(event)
            } else {
                events[next] = event
                next = (next + 1) % capacity
            }
        }

        var ordered: [ActivityEvent] { Array(events[next...] + events[..<next]) }
    }

    package init(capacity: Int = 1000, subscriberBuffer: Int = 256) {
        self.capacity = max(1, capacity)
        self.subscriberBuffer = max(1, subscriberBuffer)
    }

    /// Adds `event` to the application's log and hands it to its subscribers.
    package func record(_ event: ActivityEvent, applicationID: UUID) {
        let capacity = self.capacity
        let listeners = state.withLock { state -> [AsyncStream<ActivityEvent>.Continuation] in
            state.recent[applicationID, default: Ring()].append(event, capacity: capacity)
            return state.subscribers[applicationID].map { Array($0.values) } ?? []
        }
        // Outside the lock: a stream ending calls back into `state`.
        for listener in listeners { listener.yield(event) }
    }

    /// The application's kept events, oldest first.
    package func recent(_ applicationID: UUID) -> [ActivityEvent] {
        state.withLock { $0.recent[applicationID]?.ordered ?? [] }
    }

    /// The application's events from now on, until the stream is dropped or cancelled.
    package func subscribe(_ applicationID: UUID) -> AsyncStream<ActivityEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ActivityEvent.self, bufferingPolicy: .bufferingNewest(subscriberBuffer))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[applicationID]?[id] = nil
                if state.subscribers[applicationID]?.isEmpty == true { state.subscribers[applicationID] = nil }
            }
        }
        state.withLock { $0.subscribers[applicationID, default: [:]][id] = continuation }
        return stream
    }

    /// Subscribers of the application right now (for tests and metrics).
    package func subscriberCount(_ applicationID: UUID) -> Int {
        state.withLock { $0.subscribers[applicationID]?.count ?? 0 }
    }
}
