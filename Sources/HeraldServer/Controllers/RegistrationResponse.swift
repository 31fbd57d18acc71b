import HeraldCore
import Hummingbird
import NIOCore

/// A device as the Pivotal registration API shows it.
struct RegistrationResponse: ResponseGenerator, Encodable, Sendable {
    var device: Device

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: json()))
    }

    /// The registration as JSON; `encode(to:)` produces the same shape for lists.
    func json() -> ByteBuffer {
        var writer = JSONWriter()
        writer.field("os", device.os)
        writer.field("os_version", device.osVersion)
        writer.field("device_model", device.deviceModel)
        writer.field("device_manufacturer", device.deviceManufacturer)
        writer.field("device_alias", device.deviceAlias)
        writer.field("device_uuid", device.uuid.lowercasedString)
        writer.field("registration_token", device.registrationToken)
        writer.textObjects("tags", device.tags)
        writer.field("active", device.active)
        writer.field("custom_user_id", device.customUserID)
        writer.field("platform_uuid", device.platformID.lowercasedString)
        return writer.finish()
    }

    struct Tag: Encodable {
        var text: String
    }

    enum CodingKeys: String, CodingKey {
        case os
        case osVersion = "os_version"
        case deviceModel = "device_model"
        case deviceManufacturer = "device_manufacturer"
        case deviceAlias = "device_alias"
        case deviceUUID = "device_uuid"
        case registrationToken = "registration_token"
        case tags, active
        case customUserID = "custom_user_id"
        case platformUUID = "platform_uuid"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device.os, forKey: .os)
        try container.encode(device.osVersion, forKey: .osVersion)
        try container.encode(device.deviceModel, forKey: .deviceModel)
        try container.encode(device.deviceManufacturer, forKey: .deviceManufacturer)
        try container.encode(device.deviceAlias, forKey: .deviceAlias)
        try container.encode(device.uuid.lowercasedString, forKey: .deviceUUID)
        try container.encode(device.registrationToken, forKey: .registrationToken)
        try container.encode(device.tags.map(Tag.init(text:)), forKey: .tags)
        try container.encode(device.active, forKey: .active)
        try container.encode(device.customUserID, forKey: .customUserID)
        try container.encode(device.platformID.lowercasedString, forKey: .platformUUID)
    }
}
