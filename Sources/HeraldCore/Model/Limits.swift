/// The limits Herald enforces on what it accepts.
public enum Limits {
    /// Tags (topics) one registration may carry.
    public static let tagsPerDevice = 1024
    /// Characters in one tag.
    public static let tagLength = 255
    /// Characters in a custom user id.
    public static let customUserIDLength = 255
    /// Leaves (attribute tests) in one audience expression.
    public static let audienceLeaves = 1000
    /// Levels of `and` / `or` / `not` in one audience expression, the root's included.
    public static let audienceDepth = 10
    /// Characters in the free-text device fields (alias, model, manufacturer, os version).
    public static let deviceFieldLength = 255
    /// Bytes in a registration token.
    public static let registrationTokenLength = 4096
    /// Bytes in a request body.
    public static let requestBodyBytes = 1 << 20
    /// Characters in an application or platform name.
    public static let nameLength = 200
    /// Characters in an application description.
    public static let descriptionLength = 2000
    /// Largest `size` of a registrations page.
    public static let registrationsPageSize = 50
}
