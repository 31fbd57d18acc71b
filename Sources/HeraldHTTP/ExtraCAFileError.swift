/// Why the extra CA file (`HERALD_EXTRA_CA_FILE`) cannot be used; its description names the
/// file and the cause.
package struct ExtraCAFileError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Reason: Sendable, Equatable {
        case unreadable(String)
        case noCertificate
        case joined
        case unloadable(String)
    }

    /// The file.
    package let path: String
    let reason: Reason

    init(path: String, _ reason: Reason) {
        self.path = path
        self.reason = reason
    }

    package var description: String {
        switch reason {
        case .unreadable(let why):
            "the extra CA file \(path) (HERALD_EXTRA_CA_FILE) cannot be used: \(why)"
        case .noCertificate:
            "the extra CA file \(path) (HERALD_EXTRA_CA_FILE) holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        case .joined:
            "the extra CA file \(path) (HERALD_EXTRA_CA_FILE) has a certificate whose -----END CERTIFICATE----- line runs on "
                + "into the next one (files concatenated without a newline?): put each BEGIN and END line on its own line"
        case .unloadable(let why):
            "the extra CA file \(path) (HERALD_EXTRA_CA_FILE) cannot be loaded as trusted certificates: \(why)"
        }
    }
}
