import struct Foundation.UUID

/// An app whose backend sends pushes with `app_uuid:api_key`.
package struct App: Sendable, Equatable {
    package var id: UUID
    package var tenantID: UUID
    package var name: String
    package var description: String
    /// Whether delivered payloads carry `receiptId` (the push's receipt, which the PCF SDKs report
    /// back for analytics); on unless the app turns it off.
    package var includesReceiptID: Bool
    /// Whether a registration's `custom_user_id` must be an HS256 token signed with the platform
    /// secret (`CustomUserIDToken`); on for new apps.
    package var verifiesCustomUserID: Bool
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(
        id: UUID, tenantID: UUID, name: String, description: String, includesReceiptID: Bool = true, verifiesCustomUserID: Bool = true,
        createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.tenantID = tenantID
        self.name = name
        self.description = description
        self.includesReceiptID = includesReceiptID
        self.verifiesCustomUserID = verifiesCustomUserID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
