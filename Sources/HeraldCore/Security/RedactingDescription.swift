/// A value that holds a secret (a password, a key, a token) and describes itself without it.
///
/// Logging a value prints its description (service-lifecycle logs each service it starts, which
/// used to print the outbound proxy's password at debug level). Without a conformance Swift
/// describes a struct by reflecting over every stored property, secrets included, so every type
/// that holds one conforms here: `print`, string interpolation, `String(reflecting:)` and `dump`
/// all show only ``description``, which the type writes from its non-secret parts.
package protocol RedactingDescription: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {}

extension RedactingDescription {
    package var debugDescription: String { description }
    /// No children: `dump` and other reflection see the description only.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// How a secret appears in a ``RedactingDescription``: whether it is set, never what it is.
@inlinable
package func secretPlaceholder(_ secret: String?) -> String {
    secret == nil ? "nil" : "<redacted>"
}
