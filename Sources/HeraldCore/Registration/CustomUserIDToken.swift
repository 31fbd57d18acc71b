import Crypto

import struct Foundation.Data
import class Foundation.JSONSerialization

/// A custom user id signed by the device: a compact HS256 JWS (`header.payload.signature`, each
/// part base64url) whose payload is `{"custom_user_id":"…"}`, keyed with the platform's secret.
///
/// Apps that verify custom user ids accept only these, so that a device cannot claim another
/// user's id without the platform secret. Which bytes make the HMAC key differs between Pivotal's
/// documentation (the secret's text) and its reference generator (the secret read as hex);
/// `verify` accepts either.
package enum CustomUserIDToken {
    /// The longest token accepted, in characters.
    package static let maximumLength = 4096

    /// Signs `customUserID` with `key` (what a device does; tests and tools use it).
    package static func sign(customUserID: String, key: [UInt8]) -> String {
        // HMAC cannot fail: `try?` only because the signer's other keys can.
        (try? JWTSigner(.hs256(SymmetricKey(data: key))).sign(claims: .object(["custom_user_id": .string(customUserID)]))) ?? ""
    }

    /// The HMAC keys a platform secret stands for: its text, and its bytes when it is hex.
    package static func keys(forSecret secret: String) -> [[UInt8]] {
        var keys = [Array(secret.utf8)]
        if secret.utf8.count >= 2, secret.utf8.count % 2 == 0, let bytes = Hex.decode(secret) {
            keys.append(bytes)
        }
        return keys
    }

    /// Checks the token's signature against the platform `secret` and returns the custom user id
    /// it carries. Every failure names the field `custom_user_id`.
    package static func verify(_ token: String, secret: String) throws(ValidationError) -> String {
        let malformed = ValidationError(
            message: "custom_user_id must be a compact HS256 JWS (header.payload.signature, base64url) whose payload is "
                + #"{"custom_user_id":"…"}, signed with the platform secret"#,
            field: "custom_user_id")
        guard token.utf8.count <= maximumLength else { throw malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && isBase64URL($0) }),
            let headerBytes = Base64URL.decode(String(parts[0])),
            let payloadBytes = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2]))
        else { throw malformed }

        guard let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            header["alg"] as? String == "HS256"
        else {
            throw ValidationError(message: "the custom_user_id token must be signed with HS256 (its header's alg)", field: "custom_user_id")
        }

        // Both keys are always tried, so that the time taken does not tell which one matched.
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        var valid = false
        for key in keys(forSecret: secret) {
            let mac = (try? JWTSigner(.hs256(SymmetricKey(data: key))).signature(for: signingInput)) ?? []
            valid = Secret.constantTimeEquals(mac, signature) || valid
        }
        guard valid else {
            throw ValidationError(
                code: "invalid_signature", message: "the custom_user_id token's signature does not match the platform secret",
                field: "custom_user_id")
        }

        guard let payload = try? JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any],
            let customUserID = payload["custom_user_id"] as? String
        else {
            throw ValidationError(
                message: #"the custom_user_id token's payload must be {"custom_user_id":"…"}"#, field: "custom_user_id")
        }
        return customUserID
    }

    private static func isBase64URL(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "=")
        }
    }
}
