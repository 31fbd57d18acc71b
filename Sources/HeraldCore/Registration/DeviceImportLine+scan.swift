// MARK: A fast reading of the lines an export writes

extension DeviceImportLine {
    /// Reads a line in the plain shape an export writes (one flat object of the known keys,
    /// strings without escapes, integer times, `tags` a list of strings) straight from its
    /// bytes; nil for anything else, which the caller then decodes with `JSONDecoder`. The two
    /// agree on every line this accepts (`DeviceImportLineScanTests` compares them).
    ///
    /// Written by hand for the import's speed target (a million devices in under 30 s):
    /// Foundation's `JSONDecoder`, through its generic `Decoder` containers, was the largest
    /// part of the import's CPU after SQLite's own work (docs/benchmarks-history.md, "Where the
    /// import's time went"). It gives up (nil) rather than guess: on a
    /// backslash (any escape), a control character, invalid UTF-8, an unknown or repeated key, a
    /// number that is not a plain integer, or a value of another type than the key's; the
    /// decoder then answers exactly as before, with the field-named error where there is one.
    package static func scan(_ line: UnsafeRawBufferPointer) -> DeviceImportLine? {
        var scanner = LineScanner(bytes: line)
        return scanner.object()
    }
}

/// The keys `DeviceImportLine` reads, by their bytes.
private enum LineKey: Int, CaseIterable {
    case deviceUUID, platformUUID, os, osVersion, deviceAlias, deviceModel, deviceManufacturer, registrationToken, customUserID,
        tags, timeZone, active, createdAt, updatedAt, badge

    var name: StaticString {
        switch self {
        case .deviceUUID: "device_uuid"
        case .platformUUID: "platform_uuid"
        case .os: "os"
        case .osVersion: "os_version"
        case .deviceAlias: "device_alias"
        case .deviceModel: "device_model"
        case .deviceManufacturer: "device_manufacturer"
        case .registrationToken: "registration_token"
        case .customUserID: "custom_user_id"
        case .tags: "tags"
        case .timeZone: "time_zone"
        case .active: "active"
        case .createdAt: "created_at"
        case .updatedAt: "updated_at"
        case .badge: "badge"
        }
    }

    /// The key whose name is `bytes`, if any.
    static func named(_ bytes: UnsafeRawBufferPointer) -> LineKey? {
        for key in allCases {
            let name = key.name
            guard name.utf8CodeUnitCount == bytes.count else { continue }
            if UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount).elementsEqual(bytes) { return key }
        }
        return nil
    }
}

/// A cursor over one line's bytes; every method returns nil (or false) to give the line up.
private struct LineScanner {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): position += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        position += 1
        return true
    }

    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count,
            UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
                .elementsEqual(UnsafeRawBufferPointer(start: text.utf8Start, count: count))
        else { return false }
        position += count
        return true
    }

    /// The bytes of a string without escapes or control characters, the cursor on its opening quote.
    private mutating func rawString() -> UnsafeRawBufferPointer? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return UnsafeRawBufferPointer(rebasing: bytes[start..<position - 1])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            position += 1
        }
        return nil
    }

    private mutating func string() -> String? {
        guard let raw = rawString() else { return nil }
        return String(validating: raw.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// A string or null (`.some(nil)`).
    private mutating func optionalString() -> String?? {
        if literal("null") { return .some(nil) }
        guard let text = string() else { return nil }
        return .some(text)
    }

    /// As `RegistrationInput` reads a text field: `""` and null clear it.
    private mutating func change() -> FieldChange<String>? {
        guard let value = optionalString() else { return nil }
        guard let text = value, !text.isEmpty else { return .clear }
        return .set(text)
    }

    private mutating func optionalBool() -> Bool?? {
        if literal("null") { return .some(nil) }
        if literal("true") { return .some(true) }
        if literal("false") { return .some(false) }
        return nil
    }

    /// An integer without fraction or exponent, within Int64, or null.
    private mutating func optionalInteger() -> Int64?? {
        if literal("null") { return .some(nil) }
        let negative = take(UInt8(ascii: "-"))
        let start = position
        var value: Int64 = 0
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowA, !overflowB else { return nil }
            value = sum
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        switch current {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default: return .some(value)
        }
    }

    /// null (unchanged) or a list of strings (the device's tags).
    private mutating func tags() -> TagsChange? {
        if literal("null") { return .unchanged }
        guard take(UInt8(ascii: "[")) else { return nil }
        var tags: [String] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return .replace(tags) }
        while true {
            skipSpace()
            guard let tag = string() else { return nil }
            tags.append(tag)
            skipSpace()
            if take(UInt8(ascii: "]")) { return .replace(tags) }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    mutating func object() -> DeviceImportLine? {
        var line = DeviceImportLine()
        var seen: UInt32 = 0
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        skipSpace()
        if !take(UInt8(ascii: "}")) {
            while true {
                skipSpace()
                guard let name = rawString(), let key = LineKey.named(name) else { return nil }
                let bit = UInt32(1) << UInt32(key.rawValue)
                guard seen & bit == 0 else { return nil }
                seen |= bit
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                switch key {
                case .deviceUUID:
                    guard let value = optionalString() else { return nil }
                    line.deviceUUID = value
                case .platformUUID:
                    guard let value = optionalString() else { return nil }
                    line.platformUUID = value
                case .os:
                    guard let value = optionalString() else { return nil }
                    line.registration.os = value
                case .registrationToken:
                    guard let value = optionalString() else { return nil }
                    line.registration.registrationToken = value
                case .osVersion:
                    guard let value = change() else { return nil }
                    line.registration.osVersion = value
                case .deviceAlias:
                    guard let value = change() else { return nil }
                    line.registration.deviceAlias = value
                case .deviceModel:
                    guard let value = change() else { return nil }
                    line.registration.deviceModel = value
                case .deviceManufacturer:
                    guard let value = change() else { return nil }
                    line.registration.deviceManufacturer = value
                case .customUserID:
                    guard let value = change() else { return nil }
                    line.registration.customUserID = value
                case .timeZone:
                    guard let value = change() else { return nil }
                    line.registration.timeZone = value
                case .tags:
                    guard let value = tags() else { return nil }
                    line.registration.tags = value
                case .active:
                    guard let value = optionalBool() else { return nil }
                    line.active = value
                case .createdAt:
                    guard let value = optionalInteger() else { return nil }
                    line.createdAt = value
                case .updatedAt:
                    guard let value = optionalInteger() else { return nil }
                    line.updatedAt = value
                case .badge:
                    // As the decoder reads it (`JSONValue`; null is absent); checked in `validated`.
                    guard let value = optionalInteger() else { return nil }
                    line.registration.badge = value.map(JSONValue.int)
                }
                skipSpace()
                if take(UInt8(ascii: "}")) { break }
                guard take(UInt8(ascii: ",")) else { return nil }
            }
        }
        skipSpace()
        return position == bytes.count ? line : nil
    }
}
