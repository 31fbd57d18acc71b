import HeraldCore

import struct Foundation.UUID

/// Request bodies of the admin API, with their checks.

struct NameInput: Decodable {
    var name: String

    func validated(field: String = "name") throws -> String {
        try AdminValidation.name(name, field: field)
    }
}

struct ApplicationInput: Decodable {
    var name: String?
    var description: String?
    var tenantID: String?
    var includeReceiptID: Bool?
    var verifyCustomUserID: Bool?
    /// On creation only: the uuid and api key an application already has elsewhere (Pivotal).
    var uuid: String?
    var apiKey: String?

    enum CodingKeys: String, CodingKey {
        case name, description
        case tenantID = "tenant_id"
        case includeReceiptID = "include_receipt_id"
        case verifyCustomUserID = "verify_custom_user_id"
        case uuid
        case apiKey = "api_key"
    }
}

struct PlatformInput: Decodable {
    var name: String?
    var type: String?
    var credentials: CredentialsInput?
    /// On creation only: the uuid and secret a platform already has elsewhere (Pivotal).
    var uuid: String?
    var secret: String?
    /// Android only: whether FCM messages carry a notification block (default false: data messages).
    var fcmNotification: Bool?

    enum CodingKeys: String, CodingKey {
        case name, type, credentials, uuid, secret
        case fcmNotification = "fcm_notification"
    }

    /// `fcm_notification`, which only Android platforms have.
    func checkedFCMNotification(for type: PlatformType) throws -> Bool? {
        guard let fcmNotification else { return nil }
        guard type == .android else {
            throw APIError.badRequest("fcm_notification is an Android platform's setting", field: "fcm_notification")
        }
        return fcmNotification
    }
}

enum AdminValidation {
    static func name(_ raw: String, field: String) throws -> String {
        let name = raw.trimmingASCIIWhitespace()
        guard !name.isEmpty else { throw APIError.badRequest("\(field) must not be empty", field: field) }
        guard name.unicodeScalars.count <= Limits.nameLength else {
            throw APIError.badRequest("\(field) is at most \(Limits.nameLength) characters", field: field)
        }
        return name
    }

    static func description(_ raw: String?) throws -> String? {
        guard let raw else { return nil }
        guard raw.unicodeScalars.count <= Limits.descriptionLength else {
            throw APIError.badRequest("description is at most \(Limits.descriptionLength) characters", field: "description")
        }
        return raw
    }

    /// A uuid and secret an operator brings on creation, checked; nil for those not given.
    static func givenIdentity(uuid: String?, secret: String?, secretField: String) throws -> (UUID?, String?) {
        (try uuid.map { try Secret.checkGivenUUID($0, field: "uuid") }, try secret.map { try Secret.checkGiven($0, field: secretField) })
    }

    /// Refuses a uuid or secret in an update: they are given only on creation.
    static func refuseGivenIdentity(uuid: String?, secret: String?, secretField: String) throws {
        for (value, field) in [(uuid, "uuid"), (secret, secretField)] where value != nil {
            throw APIError.badRequest(
                "\(field) is given only on creation (a new one: regenerate it)", field: field, code: "immutable_field")
        }
    }

    static func uuid(_ raw: String?, field: String) throws -> UUID? {
        guard let raw else { return nil }
        guard let id = UUID(text: raw) else { throw APIError.badRequest("\(field) must be a UUID", field: field) }
        return id
    }
}
