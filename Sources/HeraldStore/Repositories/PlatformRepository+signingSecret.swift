import HeraldCore

import struct Foundation.UUID

extension PlatformRepository {
    /// The platform's clear secret for signing checks, or nil when the platform does not exist or
    /// its sealed secret cannot be opened with this server's encryption key (it was sealed under
    /// another key): regenerating the secret seals it anew. Database errors are thrown.
    package func signingSecret(id: UUID) async throws -> String? {
        let rows = try await database.query("SELECT secret_sealed FROM platforms WHERE id = \(id)")
        guard let sealed = try rows.first?.optionalBlob("secret_sealed"), !sealed.isEmpty,
            let clear = try? secretBox.open(sealed, context: Self.secretContext(id))
        else { return nil }
        return String(decoding: clear, as: UTF8.self)
    }
}
