/// Which fields of an answer's header block a connection hands back in
/// `HTTP2Response.answered`'s headers: all of them, or only those a client reads.
///
/// Keeping fewer saves building a string for each of the rest (an APNs fan-out reads only
/// `apns-id`). The status comes back either way; every field still goes through HPACK's dynamic
/// table. A connection that validates header blocks (`validatesHeaderBlocks`) keeps all, since
/// it checks them all.
package struct HTTP2AnswerFields: Sendable {
    /// The names kept, lowercased octets; nil for all.
    let names: [[UInt8]]?

    /// Every field, `:status` included, in the order the server sent them.
    package static let all = HTTP2AnswerFields(names: nil)

    /// Only the fields named (compared without regard to ASCII case), in the order the server
    /// sent them.
    package static func only(_ names: [String]) -> HTTP2AnswerFields {
        HTTP2AnswerFields(names: names.map { Array($0.lowercased().utf8) })
    }

    /// Whether a field of this name is kept.
    func keeps(_ name: [UInt8]) -> Bool {
        guard let names else { return true }
        return names.contains { Self.name(name, is: $0) }
    }

    /// Whether `name` is `lowercased` in any ASCII case (as `HPACKHeaders.first(name:)` compares).
    static func name(_ name: [UInt8], is lowercased: [UInt8]) -> Bool {
        name.count == lowercased.count && zip(lowercased, name).allSatisfy { $0 == $1 | (($1 &- 0x41) < 26 ? 0x20 : 0) }
    }
}
