import Logging
import Testing

@testable import HeraldServer

@Suite struct DeferredMetadataLogHandlerTests {
    private func logger(_ logs: CapturedLogs, level: Logger.Level) -> Logger {
        var logger = Logger(label: "deferred") { label in
            DeferredMetadataLogHandler(wrapping: CapturingLogHandler(label: label, logs: logs))
        }
        logger.logLevel = level
        return logger
    }

    /// Metadata set by key and as a whole reaches the wrapped handler with the message, errors too.
    @Test func metadataReachesTheWrappedHandlerWhenLogging() {
        let logs = CapturedLogs()
        var logger = logger(logs, level: .info)
        logger[metadataKey: "request_id"] = "r-1"
        logger.handler.metadata["route"] = "/v1/registration"
        logger.info("request", metadata: ["status": "201"])
        struct Failure: Error {}
        logger.error("failed", error: Failure())
        #expect(
            logs.all == [
                "info deferred: request request_id=r-1 route=/v1/registration status=201",
                "error deferred: failed request_id=r-1 route=/v1/registration error=Failure()",
            ])
    }

    /// The level is the wrapped handler's: below it nothing is logged.
    @Test func levelIsForwarded() {
        let logs = CapturedLogs()
        var logger = logger(logs, level: .warning)
        #expect(logger.logLevel == .warning)
        logger[metadataKey: "a"] = "b"
        logger.info("hidden")
        logger.warning("shown")
        #expect(logs.all == ["warning deferred: shown a=b"])
    }

    /// A copy's changes stay with the copy, as with any logger.
    @Test func copiesKeepTheirOwnMetadata() {
        let logs = CapturedLogs()
        var first = logger(logs, level: .info)
        first[metadataKey: "who"] = "first"
        var second = first
        second[metadataKey: "who"] = "second"
        first.info("one")
        second.info("two")
        #expect(logs.all == ["info deferred: one who=first", "info deferred: two who=second"])
    }
}
