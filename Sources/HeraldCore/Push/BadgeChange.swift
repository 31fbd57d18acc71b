/// What a push does to an iOS badge (`custom.ios.badge`): set it to a number (as before), or
/// change each device's count (`"+N"`, `"-N"`, `"auto"` = `"+1"`), which Herald keeps per device.
package enum BadgeChange: Sendable, Hashable {
    /// Show exactly this number.
    case set(Int64)
    /// Add this (negative: subtract) to the device's count.
    case add(Int64)

    /// The largest badge change or value accepted.
    package static let limit: Int64 = 1_000_000

    /// Reads `custom.ios.badge`; errors name `field`.
    package init(_ json: JSONValue, field: String) throws(ValidationError) {
        switch json {
        case .int(let number) where (0...Self.limit).contains(number):
            self = .set(number)
        case .string(let text):
            if text.lowercased() == "auto" {
                self = .add(1)
                return
            }
            guard let sign = text.first, sign == "+" || sign == "-", text.count >= 2,
                text.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }), let amount = Int64(text.dropFirst()),
                amount <= Self.limit
            else {
                throw Self.refusal(field)
            }
            self = .add(sign == "+" ? amount : -amount)
        default:
            throw Self.refusal(field)
        }
    }

    /// The badge a device whose count is `current` shows: never below 0.
    package func applied(to current: Int64) -> Int64 {
        switch self {
        case .set(let value): value
        case .add(let delta): max(0, min(Self.limit, current + delta))
        }
    }

    private static func refusal(_ field: String) -> ValidationError {
        ValidationError(
            code: "invalid_type", message: "must be a whole number from 0 to \(limit), \"+N\", \"-N\" or \"auto\"", field: field)
    }
}
