import HeraldCore
import HeraldStore
import NIOCore

/// One line of a device export: a JSON object and `\n`, in the shape an import reads
/// (`DeviceImportLine`): the registration's fields with `tags` as a list of strings, plus
/// `device_uuid`, `platform_uuid`, `time_zone`, `active` and the times in epoch milliseconds; a
/// device with a quiet time of its own has `quiet_time` too (left out otherwise, so that a line
/// without one stays in the shape the import reads fastest, `DeviceImportLine.scan`).
enum DeviceExportLine {
    /// Appends the device's line to `buffer`, written directly (a million devices a few seconds).
    static func write(_ device: ExportedDevice, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"device_uuid\":\"")
        buffer.writeString(device.uuid)
        buffer.writeStaticString("\",\"platform_uuid\":\"")
        buffer.writeString(device.platformID)
        buffer.writeStaticString("\",\"os\":")
        JSONWriter.string(device.os, into: &buffer)
        field(",\"os_version\":", device.osVersion, &buffer)
        field(",\"device_model\":", device.deviceModel, &buffer)
        field(",\"device_manufacturer\":", device.deviceManufacturer, &buffer)
        field(",\"device_alias\":", device.deviceAlias, &buffer)
        buffer.writeStaticString(",\"registration_token\":")
        JSONWriter.string(device.registrationToken, into: &buffer)
        buffer.writeStaticString(",\"tags\":[")
        for (index, tag) in device.tags.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            JSONWriter.string(tag, into: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
        field(",\"custom_user_id\":", device.customUserID, &buffer)
        field(",\"time_zone\":", device.timeZone, &buffer)
        if let quiet = device.quietTime {
            buffer.writeStaticString(",\"quiet_time\":{\"start\":\"")
            buffer.writeString(quiet.startText)
            buffer.writeStaticString("\",\"end\":\"")
            buffer.writeString(quiet.endText)
            buffer.writeStaticString("\"}")
        }
        buffer.writeStaticString(device.active ? ",\"active\":true,\"created_at\":" : ",\"active\":false,\"created_at\":")
        buffer.writeString(String(device.createdAt))
        buffer.writeStaticString(",\"updated_at\":")
        buffer.writeString(String(device.updatedAt))
        buffer.writeStaticString("}\n")
    }

    private static func field(_ key: StaticString, _ value: String?, _ buffer: inout ByteBuffer) {
        buffer.writeStaticString(key)
        if let value { JSONWriter.string(value, into: &buffer) } else { buffer.writeStaticString("null") }
    }
}
