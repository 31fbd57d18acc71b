#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which addresses a webhook delivery may connect to. By default only public unicast addresses:
/// a webhook URL is chosen by an app's operator, and must not reach the host's own services or
/// the private network around it (server-side request forgery). The check is for the address a
/// connection is about to use, after DNS resolution, not only for the URL's host at
/// registration (a name may resolve elsewhere later).
package struct WebhookAddressPolicy: Sendable, Hashable {
    /// Also allow private, loopback, link-local and other non-public addresses
    /// (`--webhook-allow-private`: tests, or receivers on the same private network).
    package var allowsPrivate: Bool

    package init(allowsPrivate: Bool = false) {
        self.allowsPrivate = allowsPrivate
    }

    /// Whether a connection to `address` (textual IPv4 or IPv6) is allowed; anything that is not
    /// an IP address is refused.
    package func allows(_ address: String) -> Bool {
        guard let isPublic = Self.isPublic(address) else { return false }
        return isPublic || allowsPrivate
    }

    /// Whether `address` is a public unicast address — not loopback, unspecified, private, shared
    /// (CGNAT), link-local, multicast, reserved, documentation or benchmarking; nil when it is no
    /// IP address.
    package static func isPublic(_ address: String) -> Bool? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isPublic(ipv4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return nil }
        return isPublic(ipv6: withUnsafeBytes(of: v6) { Array($0) })
    }

    private static func isPublic(ipv4 value: UInt32) -> Bool {
        func inRange(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ prefix: UInt32) -> Bool {
            let base = a << 24 | b << 16 | c << 8 | d
            let mask: UInt32 = prefix == 0 ? 0 : ~0 << (32 - prefix)
            return value & mask == base & mask
        }
        let nonPublic =
            inRange(0, 0, 0, 0, 8) || inRange(10, 0, 0, 0, 8) || inRange(100, 64, 0, 0, 10) || inRange(127, 0, 0, 0, 8)
            || inRange(169, 254, 0, 0, 16) || inRange(172, 16, 0, 0, 12) || inRange(192, 0, 0, 0, 24) || inRange(192, 0, 2, 0, 24)
            || inRange(192, 88, 99, 0, 24) || inRange(192, 168, 0, 0, 16) || inRange(198, 18, 0, 0, 15)
            || inRange(198, 51, 100, 0, 24) || inRange(203, 0, 113, 0, 24) || inRange(224, 0, 0, 0, 4) || inRange(240, 0, 0, 0, 4)
        return !nonPublic
    }

    private static func isPublic(ipv6 bytes: [UInt8]) -> Bool {
        // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
        // addresses reach an IPv4 address: judge that one.
        let embedded = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return isPublic(ipv4: embedded)
        }
        if bytes[0..<12].allSatisfy({ $0 == 0 }) {
            return false  // ::, ::1 and the deprecated IPv4-compatible form
        }
        if bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xff && bytes[3] == 0x9b && bytes[4..<12].allSatisfy({ $0 == 0 }) {
            return isPublic(ipv4: embedded)
        }
        let nonPublic =
            bytes[0] & 0xfe == 0xfc  // unique local fc00::/7
            || (bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80)  // link-local fe80::/10
            || (bytes[0] == 0xfe && bytes[1] & 0xc0 == 0xc0)  // site-local fec0::/10 (deprecated)
            || bytes[0] == 0xff  // multicast
            || (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0d && bytes[3] == 0xb8)  // documentation 2001:db8::/32
            || (bytes[0] == 0x01 && bytes[1] == 0x00 && bytes[2..<8].allSatisfy { $0 == 0 })  // discard-only 100::/64
        return !nonPublic
    }
}
