extension String {
    /// Whether the text holds a NUL character. PostgreSQL cannot store one in a text column and
    /// SQLite returns such text cut at the NUL, so no backend stores it faithfully: Herald refuses
    /// it everywhere text comes in, and both backends answer the same 400. (Every other control
    /// character is stored and read back as sent on both.)
    package var containsNUL: Bool {
        utf8.contains(0)
    }

    /// Refuses text with a NUL character, naming `field`. The one rule for text Herald stores.
    package func requireStorable(field: String) throws(ValidationError) {
        if containsNUL {
            throw ValidationError(message: "\(field) must not contain NUL characters", field: field)
        }
    }
}
