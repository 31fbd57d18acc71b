// MARK: A compact reading of an expression

extension AudienceExpression {
    /// The expression on one line, for people (the dashboard's schedules list):
    /// `topic:news and not topic:sports and (platform:ios or platform:android)`.
    ///
    /// Leaves are `key:value`; a value with anything but letters, digits and `._-/+@` in it (or
    /// an empty one) is written as a JSON string, so a value can never read as an operator or a
    /// parenthesis. `and` and `or` are parenthesized inside each other and under `not`; an
    /// operator with one operand is written as that operand. Longer than `limit` characters, the
    /// text is cut at the last whole word that fits and ends in `… (N leaves)`.
    package func compactText(limit: Int = .max) -> String {
        let whole = written(nested: false)
        guard whole.count > limit else { return whole }
        let tail = " … (\(leaves.count) leaves)"
        var cut = whole.prefix(max(0, limit - tail.count))
        if let space = cut.lastIndex(of: " ") { cut = cut[..<space] }
        return String(cut) + tail
    }

    /// `nested`: the expression sits under an operator, so a multi-operand `and`/`or` needs parentheses.
    private func written(nested: Bool) -> String {
        switch self {
        case .and(let operands): Self.joined(operands, by: "and", nested: nested)
        case .or(let operands): Self.joined(operands, by: "or", nested: nested)
        case .not(let operand): "not " + operand.written(nested: true)
        case .leaf(let leaf): leaf.key + ":" + Self.quotedIfNeeded(leaf.value)
        }
    }

    private static func joined(_ operands: [AudienceExpression], by word: String, nested: Bool) -> String {
        if operands.count == 1 { return operands[0].written(nested: nested) }
        let text = operands.map { $0.written(nested: true) }.joined(separator: " \(word) ")
        return nested ? "(\(text))" : text
    }

    /// The value as it is when it is a plain word, else as a JSON string.
    private static func quotedIfNeeded(_ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-/+@".unicodeScalars.contains(scalar))
            }
        return plain ? value : JSONValue.string(value).jsonText
    }
}
