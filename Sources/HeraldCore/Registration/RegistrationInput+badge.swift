extension RegistrationInput {
    /// `badge`, checked: the number the app's icon shows now; nil (absent or null) leaves the
    /// device's count as it is.
    package func validatedBadge() throws(ValidationError) -> Int64? {
        try Self.badgeCount(badge, field: "badge")
    }

    /// A badge count as the app (registration) or an operator (admin API) gives it: 0 to
    /// `BadgeChange.limit`; nil for absent or null. Errors name `field`.
    package static func badgeCount(_ value: JSONValue?, field: String) throws(ValidationError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .int(let number)? where (0...BadgeChange.limit).contains(number): return number
        default:
            throw ValidationError(
                code: "invalid_type", message: "the number the app's icon shows: a whole number from 0 to \(BadgeChange.limit)",
                field: field)
        }
    }
}
