import struct Foundation.UUID

/// An app whose backend sends pushes with `app_uuid:api_key`.
public struct App: Sendable, Equatable {
    public var id: UUID
    public var tenantID: UUID
    public var name: String
    public var description: String
    /// Whether delivered payloads carry `receiptId` (the push's receipt, which the PCF SDKs report
    /// back for analytics); on unless the app turns it off.
    public var includesReceiptID: Bool
    /// Whether a registration's `custom_user_id` must be an HS256 token signed with the platform
    /// secret (`CustomUserIDToken`); on for new apps.
    public var verifiesCustomUserID: Bool
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
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
