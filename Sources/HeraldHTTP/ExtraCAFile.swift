import Foundation
import NIOSSL

/// The PEM file of CAs trusted besides the system's (`HERALD_EXTRA_CA_FILE`), read and checked
/// once when the process starts: a file the TLS library cannot load would otherwise fail every
/// provider connection later, far from its cause.
package enum ExtraCAFile {
    /// The file's PEM text, once every certificate in it loads and TLS accepts them as roots.
    package static func load(path: String) throws(ExtraCAFileError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "there is no such file"
            throw ExtraCAFileError(path: path, .unreadable(reason))
        }
        let text = String(decoding: data, as: UTF8.self)
        try check(text, path: path)
        return text
    }

    /// Checks PEM text as `load` does; `path` names it in the error.
    package static func check(_ text: String, path: String) throws(ExtraCAFileError) {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        let certificates = text.components(separatedBy: begin).count - 1
        guard certificates > 0 else { throw ExtraCAFileError(path: path, .noCertificate) }
        // Each END line must end its line: two files concatenated without a newline glue the
        // next BEGIN onto it, and the TLS library then rejects the whole file.
        var rest = text[...]
        while let range = rest.range(of: end) {
            rest = rest[range.upperBound...]
            if let next = rest.first, !next.isNewline, !next.isWhitespace {
                throw ExtraCAFileError(path: path, .joined)
            }
        }
        let loaded: [NIOSSLCertificate]
        do {
            loaded = try NIOSSLCertificate.fromPEMBytes(Array(text.utf8))
        } catch {
            throw ExtraCAFileError(path: path, .unloadable("\(error)"))
        }
        guard loaded.count == certificates else {
            throw ExtraCAFileError(path: path, .unloadable("\(loaded.count) of its \(certificates) certificates load"))
        }
        do {
            _ = try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: text)
        } catch {
            throw ExtraCAFileError(path: path, .unloadable("\(error)"))
        }
    }
}
