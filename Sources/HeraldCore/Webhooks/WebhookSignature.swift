import Crypto
import Foundation

/// The `Herald-Signature` header of a webhook delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256>`,
/// the HMAC keyed with the endpoint's secret over `"<t>.<body>"`. A receiver recomputes it with
/// its copy of the secret, compares in constant time, and refuses a `t` too far from its clock
/// (a replayed delivery).
package enum WebhookSignature {
    /// The header value for `body` sent at `timestamp` (unix seconds).
    package static func header(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        "t=\(timestamp),v1=\(Hex.encode(mac(secret: secret, timestamp: timestamp, body: body)))"
    }

    /// Whether `header` signs `body` with `secret` at a time within `tolerance` seconds of `now`.
    /// Several `v1` values (a secret being rotated) are accepted if any matches.
    package static func verify(header: String, secret: String, body: [UInt8], now: Int64, tolerance: Int64 = 300) -> Bool {
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int64(pair[1])
            case "v1": if let bytes = Hex.decode(pair[1]) { signatures.append(bytes) }
            default: continue
            }
        }
        guard let timestamp, abs(now - timestamp) <= tolerance, !signatures.isEmpty else { return false }
        let expected = mac(secret: secret, timestamp: timestamp, body: body)
        return signatures.contains { Secret.constantTimeEquals($0, expected) }
    }

    private static func mac(secret: String, timestamp: Int64, body: [UInt8]) -> [UInt8] {
        var signed = Array("\(timestamp).".utf8)
        signed.append(contentsOf: body)
        return Array(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8))))
    }
}
