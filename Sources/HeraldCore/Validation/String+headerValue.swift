extension String {
    /// Whether the text may be sent as an HTTP field value (RFC 9110 §5.5): no control
    /// characters other than a tab inside, no space or tab at either end.
    public var isHTTPFieldValue: Bool {
        let bytes = utf8
        guard let first = bytes.first, let last = bytes.last else { return true }
        if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return false }
        return !bytes.contains { $0 == 0x7F || ($0 < 0x20 && $0 != 0x09) }
    }

    /// Whether the text is one or more visible ASCII characters (no spaces): a bundle id or
    /// another identifier that goes in a header.
    public var isVisibleASCII: Bool {
        !isEmpty && utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
