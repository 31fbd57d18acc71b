extension String {
    /// This text as a name: trimmed, not empty, storable, at most `Limits.nameLength` characters.
    package func checkedName(field: String) throws(ValidationError) -> String {
        let trimmed = trimmingASCIIWhitespace()
        guard !trimmed.isEmpty else { throw ValidationError(message: "\(field) must not be empty", field: field) }
        try trimmed.requireStorable(field: field)
        guard trimmed.unicodeScalars.count <= Limits.nameLength else {
            throw ValidationError(message: "\(field) is at most \(Limits.nameLength) characters", field: field)
        }
        return trimmed
    }
}
