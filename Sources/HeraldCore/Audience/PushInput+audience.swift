extension PushInput.Target {
    /// `target.audience`, checked: nil when absent (JSON `null` included); faults name their
    /// path under `target.audience`.
    func audienceExpression() throws(ValidationError) -> AudienceExpression? {
        guard let audience, audience != .null else { return nil }
        return try AudienceExpression.parse(audience, path: "target.audience")
    }
}
