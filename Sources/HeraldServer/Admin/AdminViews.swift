import HeraldCore
import HeraldStore
import Hummingbird

/// JSON shapes of the admin API. Clear secrets appear only in the answer that created them.

struct TenantView: ResponseEncodable {
    var id: String
    var name: String
    var createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, name
        case createdAt = "created_at"
    }

    init(_ tenant: Tenant) {
        id = tenant.id.lowercasedString
        name = tenant.name
        createdAt = tenant.createdAt
    }
}

struct AdminTokenView: ResponseEncodable {
    var id: String
    var tenantID: String?
    var name: String
    var createdAt: Int64
    /// Only when just created.
    var token: String?

    enum CodingKeys: String, CodingKey {
        case id
        case tenantID = "tenant_id"
        case name
        case createdAt = "created_at"
        case token
    }

    init(_ record: AdminToken, token: String? = nil) {
        id = record.id.lowercasedString
        tenantID = record.tenantID?.lowercasedString
        name = record.name
        createdAt = record.createdAt
        self.token = token
    }
}

struct ApplicationView: ResponseEncodable {
    var uuid: String
    var tenantID: String
    var name: String
    var description: String
    var includeReceiptID: Bool
    var verifyCustomUserID: Bool
    var createdAt: Int64
    var updatedAt: Int64
    /// Only when just created or regenerated.
    var apiKey: String?

    enum CodingKeys: String, CodingKey {
        case uuid
        case tenantID = "tenant_id"
        case name, description
        case includeReceiptID = "include_receipt_id"
        case verifyCustomUserID = "verify_custom_user_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case apiKey = "api_key"
    }

    init(_ app: App, apiKey: String? = nil) {
        uuid = app.id.lowercasedString
        tenantID = app.tenantID.lowercasedString
        name = app.name
        description = app.description
        includeReceiptID = app.includesReceiptID
        verifyCustomUserID = app.verifiesCustomUserID
        createdAt = app.createdAt
        updatedAt = app.updatedAt
        self.apiKey = apiKey
    }
}

struct PlatformView: ResponseEncodable {
    var uuid: String
    var appUUID: String
    var name: String
    var type: String
    var credentials: CredentialsView?
    var credentialsStatus: String
    /// Android only: whether FCM messages carry a notification block.
    var fcmNotification: Bool?
    var createdAt: Int64
    var updatedAt: Int64
    /// Only when just created or regenerated.
    var secret: String?

    struct CredentialsView: Encodable {
        var kind: String
        var fields: [String: String]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(kind, forKey: AnyCodingKey("kind"))
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                try container.encode(value, forKey: AnyCodingKey(key))
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case uuid
        case appUUID = "app_uuid"
        case name, type, credentials
        case credentialsStatus = "credentials_status"
        case fcmNotification = "fcm_notification"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case secret
    }

    init(_ platform: Platform, secret: String? = nil) {
        uuid = platform.id.lowercasedString
        appUUID = platform.applicationID.lowercasedString
        name = platform.name
        type = platform.type.rawValue
        credentials = platform.credentialsSummary.map { CredentialsView(kind: $0.kind, fields: $0.fields) }
        credentialsStatus = platform.credentialsStatus.rawValue
        fcmNotification = platform.type == .android ? platform.fcmNotification : nil
        createdAt = platform.createdAt
        updatedAt = platform.updatedAt
        self.secret = secret
    }
}

struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct ListView<Item: Encodable & Sendable>: ResponseEncodable {
    var items: [Item]
}

struct DevicePageView: ResponseEncodable {
    var devices: [RegistrationResponse]
    var total: Int
    var page: Int
    var size: Int
}
