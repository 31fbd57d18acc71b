/// A request that Herald refuses, with the field it is about.
///
/// Core code throws these; the server turns them into
/// `{"error":{"code":…,"message":…,"field":…}}` answers.
package struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A short machine-readable reason, such as `invalid_token`.
    package var code: String
    /// A sentence for the person who sent the request.
    package var message: String
    /// The JSON path of the field at fault, when there is one (`tags[3]`, `credentials.p8`).
    package var field: String?

    package init(code: String = "invalid_field", message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    package var description: String {
        if let field { return "\(field): \(message)" }
        return message
    }
}
