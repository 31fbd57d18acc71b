/// The limits Herald enforces on what it accepts.
package enum Limits {
    /// Tags (topics) one registration may carry.
    package static let tagsPerDevice = 1024
    /// Characters in one tag.
    package static let tagLength = 255
    /// Characters in a custom user id.
    package static let customUserIDLength = 255
    /// Leaves (attribute tests) in one audience expression.
    package static let audienceLeaves = 1000
    /// Levels of `and` / `or` / `not` in one audience expression, the root's included.
    package static let audienceDepth = 10
    /// Characters in the free-text device fields (alias, model, manufacturer, os version).
    package static let deviceFieldLength = 255
    /// Bytes in a registration token.
    package static let registrationTokenLength = 4096
    /// Bytes in a request body.
    package static let requestBodyBytes = 1 << 20
    /// Characters in an application or platform name.
    package static let nameLength = 200
    /// Characters in an application description.
    package static let descriptionLength = 2000
    /// Largest `size` of a registrations page.
    package static let registrationsPageSize = 50
}
