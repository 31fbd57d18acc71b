import struct Foundation.URLComponents

/// A webhook URL taken apart and checked: where a delivery connects, before DNS.
package struct WebhookTarget: Sendable, Equatable {
    /// Whether the connection uses TLS (`https`).
    package var secure: Bool
    /// The URL's host: a name, or an IP address (without the brackets of an IPv6 literal).
    package var host: String
    package var port: Int

    /// The longest URL accepted.
    package static let maximumLength = 2048

    /// Checks `url` as a webhook endpoint: absolute, `https` (or `http` when `policy` allows
    /// private addresses, for tests and receivers on a private network), with a host, without
    /// user information or a fragment, and not a literal IP address that `policy` refuses. A
    /// host name is checked again at every connection, once resolved.
    package init(url: String, policy: WebhookAddressPolicy, field: String = "url") throws(ValidationError) {
        guard url.utf8.count <= Self.maximumLength, url.allSatisfy({ $0.isASCII && !$0.isWhitespace }),
            let components = URLComponents(string: url), let scheme = components.scheme?.lowercased()
        else {
            throw ValidationError(message: "an absolute https:// URL of at most \(Self.maximumLength) characters is needed", field: field)
        }
        switch scheme {
        case "https": secure = true
        case "http" where policy.allowsPrivate: secure = false
        case "http":
            throw ValidationError(
                message: "webhook URLs must use https:// (http:// only where the server allows private addresses)", field: field)
        default:
            throw ValidationError(message: "webhook URLs must use https://", field: field)
        }
        guard var host = components.host, !host.isEmpty else {
            throw ValidationError(message: "the URL has no host", field: field)
        }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            throw ValidationError(message: "the URL must not carry user information or a fragment", field: field)
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if WebhookAddressPolicy.isPublic(host) != nil {
            guard policy.allows(host) else {
                throw ValidationError(message: "\(host) is a private, loopback or otherwise non-public address", field: field)
            }
        } else if !Self.isHostName(host) {
            throw ValidationError(message: "the host must be a DNS name (letters, digits, '-' and '.') or an IP address", field: field)
        }
        if components.port == 0 {
            throw ValidationError(message: "the URL's port must be 1 to 65535", field: field)
        }
        self.host = host
        self.port = components.port ?? (secure ? 443 : 80)
    }

    /// Letters, digits and hyphens in dot-separated labels of at most 63 characters.
    static func isHostName(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return host.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count)
                    && label.utf8.allSatisfy { byte in
                        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == 0x2d
                    }
            }
    }
}
