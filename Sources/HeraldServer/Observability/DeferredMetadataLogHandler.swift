import Logging

/// Keeps a logger's metadata to itself and gives it to the wrapped handler only when a message
/// is logged.
///
/// swift-log's `StreamLogHandler` renders its metadata to text on every change. Each request's
/// logger has its metadata changed (Hummingbird's request id, then `RequestIDMiddleware`'s) and
/// at the default level logs nothing, so that rendering was work thrown away on every request.
package struct DeferredMetadataLogHandler<Wrapped: LogHandler>: LogHandler {
    private var wrapped: Wrapped
    package var metadata: Logger.Metadata

    package init(wrapping wrapped: Wrapped) {
        self.metadata = wrapped.metadata
        self.wrapped = wrapped
    }

    package var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var handler = wrapped
        handler.metadata = metadata
        handler.log(event: event)
    }
}
