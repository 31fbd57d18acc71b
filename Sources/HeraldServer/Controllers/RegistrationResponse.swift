import HeraldCore
import Hummingbird

/// A device as the Pivotal registration API shows it.
struct RegistrationResponse: ResponseEncodable {
    struct Tag: Encodable {
        var text: String
    }

    var device: Device

    enum CodingKeys: String, CodingKey {
        case os, osVersion = "os_version", deviceModel = "device_model", deviceManufacturer = "device_manufacturer"
        case deviceAlias = "device_alias", deviceUUID = "device_uuid", registrationToken = "registration_token"
        case tags, active, customUserID = "custom_user_id", platformUUID = "platform_uuid"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device.os, forKey: .os)
        try container.encode(device.osVersion, forKey: .osVersion)
        try container.encode(device.deviceModel, forKey: .deviceModel)
        try container.encode(device.deviceManufacturer, forKey: .deviceManufacturer)
        try container.encode(device.deviceAlias, forKey: .deviceAlias)
        try container.encode(device.uuid.uuidString.lowercased(), forKey: .deviceUUID)
        try container.encode(device.registrationToken, forKey: .registrationToken)
        try container.encode(device.tags.map(Tag.init(text:)), forKey: .tags)
        try container.encode(device.active, forKey: .active)
        try container.encode(device.customUserID, forKey: .customUserID)
        try container.encode(device.platformID.uuidString.lowercased(), forKey: .platformUUID)
    }
}
