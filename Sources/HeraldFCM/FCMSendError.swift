/// A message that got no answer from FCM: no connection, or the connection failed with it in flight.
public struct FCMSendError: Error, Sendable, CustomStringConvertible {
    public let description: String
}
