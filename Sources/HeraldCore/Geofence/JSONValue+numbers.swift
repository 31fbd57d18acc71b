extension JSONValue {
    /// A number given as a JSON number or as a string holding one (`"49.28"`), as the Pivotal API
    /// sends coordinates; nil for anything else, and for NaN and infinities.
    package var lenientDouble: Double? {
        let value: Double?
        switch self {
        case .int(let int): value = Double(int)
        case .double(let double): value = double
        case .string(let text): value = Double(text.trimmingSpaces)
        default: value = nil
        }
        guard let value, value.isFinite else { return nil }
        return value
    }

    /// A whole number given as a JSON number or as a string of digits (`"12"`), as the Pivotal API
    /// sends ids; nil for anything else, fractions included.
    package var lenientInt: Int64? {
        switch self {
        case .int(let int):
            return int
        case .double(let double):
            guard double.isFinite, double == double.rounded(), abs(double) < 9e15 else { return nil }
            return Int64(double)
        case .string(let text):
            return Int64(text.trimmingSpaces)
        default:
            return nil
        }
    }
}

extension String {
    /// The text without leading and trailing spaces.
    var trimmingSpaces: Substring {
        var slice = self[...]
        while slice.first == " " { slice = slice.dropFirst() }
        while slice.last == " " { slice = slice.dropLast() }
        return slice
    }
}
