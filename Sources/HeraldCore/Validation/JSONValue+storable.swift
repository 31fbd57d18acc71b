extension JSONValue {
    /// Refuses a JSON document holding a NUL character in any string or member name, naming the
    /// first such field by its JSON path (`tags[1]`, `credentials.topic`); members in key order,
    /// so the answer does not depend on hashing.
    package func requireStorable(path: String = "") throws(ValidationError) {
        switch self {
        case .string(let text):
            try text.requireStorable(field: path.isEmpty ? "body" : path)
        case .array(let values):
            for (index, value) in values.enumerated() {
                try value.requireStorable(path: "\(path)[\(index)]")
            }
        case .object(let members):
            for key in members.keys.sorted() {
                let member = path.isEmpty ? key : "\(path).\(key)"
                try key.requireStorable(field: member)
                try members[key]!.requireStorable(path: member)
            }
        case .null, .bool, .int, .double:
            return
        }
    }

    /// Whether JSON text may hold a NUL character: it can only be written as the escape `\u0000`.
    /// A cheap scan that lets the usual body skip `requireStorable(path:)`; a hit may be a false
    /// alarm (an escaped backslash followed by `u0000`), which the walk then clears.
    package static func mayContainNUL(_ bytes: some Collection<UInt8>) -> Bool {
        let escape = nulEscape
        var matched = 0
        for byte in bytes {
            if byte == escape[matched] {
                matched += 1
                if matched == escape.count { return true }
            } else {
                matched = byte == escape[0] ? 1 : 0
            }
        }
        return false
    }

    private static let nulEscape: [UInt8] = Array(#"\u0000"#.utf8)
}
