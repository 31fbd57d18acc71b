import NIOHTTP2

/// The stream accounting of one HTTP/2 connection (`HTTP2ConnectionHandler`): which stream id
/// comes next, how many streams are open against the server's `SETTINGS_MAX_CONCURRENT_STREAMS`,
/// and whether the connection still takes requests. The handler keeps each request's data; the
/// machine decides, and answers each event with what the handler must do.
struct HTTP2StreamStateMachine {
    private enum State {
        /// Takes new streams.
        case active
        /// Takes no new stream (GOAWAY, an overdue answer, out of ids): the open ones finish.
        case draining
        /// Nothing more will happen on the connection.
        case closed
    }

    /// The most streams opened at once, whatever the server allows.
    static let streamCeiling = 1000
    /// The last stream id before a connection must be replaced (ids are 31 bits).
    static let lastUsableStreamID = Int32.max - 2

    private var state: State = .active
    /// Streams opened and not yet closed.
    private(set) var openStreams = 0
    /// Until the server's first SETTINGS arrives, one stream: APNs may allow only one.
    private(set) var maximumStreams = 1
    /// Whether the server's first SETTINGS frame has arrived.
    private var heardSettings = false
    private var nextStreamID: Int32

    init(firstStreamID: Int32 = 1) {
        nextStreamID = firstStreamID
    }

    /// Whether the connection takes new requests.
    var isActive: Bool {
        switch state {
        case .active: true
        case .draining, .closed: false
        }
    }

    // MARK: Events

    enum OpenAction: Equatable {
        /// Open this stream for the next request.
        case open(HTTP2StreamID)
        /// As many streams are open as the server allows: wait for one to close.
        case atLimit
        /// The connection takes no new stream; nothing to do.
        case refused
        /// The connection has just stopped taking requests (out of stream ids): `StopAction`.
        case stop(StopAction)
    }

    /// What the handler does when the connection stops taking requests.
    enum StopAction: Equatable {
        /// Hand the queued requests back as not sent and say the connection is unusable; close it
        /// when `close` (no stream open).
        case stopTaking(close: Bool)
        /// Stopped already: nothing to do.
        case none
    }

    enum CloseAction: Equatable {
        /// Open more streams if requests wait.
        case openMore
        /// Nothing to do (the connection drains).
        case none
        /// The last stream of a draining connection closed: close the connection.
        case closeConnection
    }

    /// A request waits: may a stream be opened for it?
    mutating func openStream() -> OpenAction {
        switch state {
        case .active:
            guard openStreams < maximumStreams else { return .atLimit }
            guard nextStreamID <= Self.lastUsableStreamID else { return .stop(stopTaking()) }
            let streamID = HTTP2StreamID(nextStreamID)
            nextStreamID += 2
            openStreams += 1
            return .open(streamID)
        case .draining, .closed:
            return .refused
        }
    }

    /// A stream opened by `openStream()` closed (answered, reset, failed, refused).
    mutating func streamClosed() -> CloseAction {
        precondition(openStreams > 0, "a stream closed that was not open")
        openStreams -= 1
        switch state {
        case .active:
            return .openMore
        case .draining:
            guard openStreams == 0 else { return .none }
            state = .closed
            return .closeConnection
        case .closed:
            return .none
        }
    }

    /// A SETTINGS frame from the server, with its SETTINGS_MAX_CONCURRENT_STREAMS if it names one.
    /// A first frame without it means no limit (RFC 9113 §6.5.2: the initial value is
    /// unlimited), so the ceiling applies; a later frame without it changes nothing. `.openMore`
    /// when more streams may be opened (after the settings are acknowledged).
    mutating func serverSettings(maximumConcurrentStreams value: Int?) -> CloseAction {
        let first = !heardSettings
        heardSettings = true
        guard let limit = value ?? (first ? Self.streamCeiling : nil) else { return .none }
        maximumStreams = min(limit, Self.streamCeiling)
        switch state {
        case .active: return .openMore
        case .draining, .closed: return .none
        }
    }

    /// The connection stops taking requests: the server's GOAWAY, an overdue answer, a
    /// connection error.
    mutating func stopTaking() -> StopAction {
        switch state {
        case .active:
            if openStreams == 0 {
                state = .closed
                return .stopTaking(close: true)
            }
            state = .draining
            return .stopTaking(close: false)
        case .draining, .closed:
            return .none
        }
    }

    /// The connection closed: every stream still open is lost.
    mutating func connectionClosed() -> StopAction {
        let action: StopAction
        switch state {
        case .active: action = .stopTaking(close: false)
        case .draining, .closed: action = .none
        }
        state = .closed
        return action
    }
}
