import Synchronization

/// How many streams a pool's connections keep in flight at once, below the server's own limit:
/// halved when a connection goes down with requests in flight, grown back by half once as many
/// answers as the window have come without a loss.
///
/// A server (or a network path) that resets connections after a number of requests loses every
/// request in flight with each reset. With the whole stream limit in flight (1,000) and a reset
/// every 500 requests, a connection lost as many requests as it answered, and resending them
/// made no progress; a window below the reset interval makes each connection answer most of
/// what it carried. A healthy connection never loses one, so its window stays at the ceiling.
final class HTTP2StreamWindow: Sendable {
    /// The window while nothing was lost: the handler's own ceiling.
    let ceiling: Int
    /// The window never goes below this, however often connections drop.
    let floor: Int
    private let limit: Atomic<Int>
    /// Answers since the window last changed.
    private let answers = Atomic<Int>(0)

    init(ceiling: Int = HTTP2StreamStateMachine.streamCeiling, floor: Int = 16) {
        self.ceiling = max(1, ceiling)
        self.floor = min(max(1, floor), self.ceiling)
        self.limit = Atomic(self.ceiling)
    }

    /// Streams a connection may have open now.
    var value: Int { limit.load(ordering: .relaxed) }

    /// A connection went down with `inFlight` requests unanswered.
    func connectionLost(inFlight: Int) {
        guard inFlight > 0 else { return }
        let current = limit.load(ordering: .relaxed)
        limit.store(max(floor, min(current, inFlight) / 2), ordering: .relaxed)
        answers.store(0, ordering: .relaxed)
    }

    /// A request was answered.
    func answered() {
        // At the ceiling (the healthy case) nothing is counted: one shared load, no write.
        let current = limit.load(ordering: .relaxed)
        guard current < ceiling else { return }
        if answers.wrappingAdd(1, ordering: .relaxed).newValue >= current {
            answers.store(0, ordering: .relaxed)
            limit.store(min(ceiling, current + current / 2 + 1), ordering: .relaxed)
        }
    }
}
