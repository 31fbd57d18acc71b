import struct Foundation.UUID

/// `target.audience` of a push: a boolean expression over what a device registered, evaluated
/// by the store while it pages through the app's devices.
///
/// JSON shape: `{"and": [e, …]}`, `{"or": [e, …]}`, `{"not": e}`, or a leaf (`AudienceLeaf`),
/// each an object with exactly one member.
package indirect enum AudienceExpression: Sendable, Hashable {
    /// Every operand holds.
    case and([AudienceExpression])
    /// At least one operand holds.
    case or([AudienceExpression])
    /// The operand does not hold.
    case not(AudienceExpression)
    /// One test of a device's attribute.
    case leaf(AudienceLeaf)

    /// The leaves, in document order.
    package var leaves: [AudienceLeaf] {
        var out: [AudienceLeaf] = []
        collectLeaves(into: &out)
        return out
    }

    private func collectLeaves(into out: inout [AudienceLeaf]) {
        switch self {
        case .and(let operands), .or(let operands):
            for operand in operands { operand.collectLeaves(into: &out) }
        case .not(let operand):
            operand.collectLeaves(into: &out)
        case .leaf(let leaf):
            out.append(leaf)
        }
    }

    /// Levels of operators and leaves from the root down to the deepest leaf (a lone leaf is 1).
    package var depth: Int {
        switch self {
        case .and(let operands), .or(let operands): 1 + (operands.map(\.depth).max() ?? 0)
        case .not(let operand): 1 + operand.depth
        case .leaf: 1
        }
    }
}

/// One test of a device's attribute in an audience expression.
package enum AudienceLeaf: Sendable, Hashable {
    /// Subscribed to the topic (lower-cased, as tags are stored).
    case topic(String)
    /// Registered with a platform of this type.
    case platformType(PlatformType)
    /// Registered with this platform.
    case platform(UUID)
    /// Registered under this custom user id.
    case customUserID(String)
    /// This device.
    case device(UUID)
    /// Registered with this IANA time zone.
    case timeZone(String)
    /// Registered with this `os` (as the SDKs send it: `ios`, `android`, …; compared without case).
    case os(String)

    /// The JSON member name of the leaf.
    package var key: String {
        switch self {
        case .topic: "topic"
        case .platformType, .platform: "platform"
        case .customUserID: "custom_user_id"
        case .device: "device"
        case .timeZone: "time_zone"
        case .os: "os"
        }
    }

    /// The leaf's JSON value.
    package var value: String {
        switch self {
        case .topic(let value), .customUserID(let value), .timeZone(let value), .os(let value): value
        case .platformType(let type): type.rawValue
        case .platform(let id), .device(let id): id.lowercasedString
        }
    }
}
