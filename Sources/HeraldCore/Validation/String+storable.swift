extension String {
    /// Whether the text holds a NUL character, which PostgreSQL cannot store in text columns
    /// (SQLite can): refused up front, so that both backends answer the same 400.
    var containsNUL: Bool {
        utf8.contains(0)
    }

    /// Refuses text with a NUL character, naming `field`.
    func requireStorable(field: String) throws(ValidationError) {
        if containsNUL {
            throw ValidationError(message: "\(field) must not contain NUL characters", field: field)
        }
    }
}
