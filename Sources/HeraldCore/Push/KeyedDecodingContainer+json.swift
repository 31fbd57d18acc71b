extension KeyedDecodingContainer {
    /// A member as JSON, with `null` told apart from absence: nil when the key is absent,
    /// `.null` when its value is null (a field that `null` removes and absence keeps).
    package func decodeJSONIfPresent(forKey key: Key) throws -> JSONValue? {
        guard contains(key) else { return nil }
        return try decodeIfPresent(JSONValue.self, forKey: key) ?? .null
    }
}
