/// A message that got no answer from its push service: no connection, or the connection failed
/// with it in flight.
public struct WebPushSendError: Error, Sendable, CustomStringConvertible {
    public let description: String
}
