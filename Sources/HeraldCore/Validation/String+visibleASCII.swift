extension String {
    /// Whether the text is one or more visible ASCII characters (no spaces): a bundle id or
    /// another identifier that goes in a header.
    package var isVisibleASCII: Bool {
        !isEmpty && utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
