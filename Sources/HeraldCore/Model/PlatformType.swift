/// The delivery network a platform sends through.
package enum PlatformType: String, Sendable, Codable, CaseIterable {
    /// Apple Push Notification service (HTTP/2).
    case ios
    /// Firebase Cloud Messaging HTTP v1.
    case android
    /// Web Push (RFC 8030/8291/8292).
    case web
    /// Windows Push Notification Services.
    case windows

    /// Parses a platform or device `os` name as the PCF SDKs and API send it.
    ///
    /// `windows8` is the PCF name of a WNS device. Retired networks
    /// (`windowsPhone`, `bb10`, `gcm`) are refused with an explanation.
    package static func parse(_ raw: String, field: String) throws(ValidationError) -> PlatformType {
        switch raw.lowercased() {
        case "ios": return .ios
        case "android", "fcm": return .android
        case "web", "webpush": return .web
        case "windows", "windows8", "wns": return .windows
        case "windowsphone", "mpns":
            throw ValidationError(
                code: "platform_retired",
                message: "Microsoft retired the Windows Phone push service (MPNS); register Windows devices as 'windows' (WNS) instead",
                field: field)
        case "bb10", "blackberry":
            throw ValidationError(
                code: "platform_retired",
                message: "BlackBerry retired BlackBerry Push in 2019; there is no successor network",
                field: field)
        case "gcm", "c2dm":
            throw ValidationError(
                code: "platform_retired",
                message: "Google retired GCM and C2DM; register Android devices as 'android' (FCM HTTP v1) instead",
                field: field)
        default:
            throw ValidationError(
                code: "invalid_platform",
                message: "'\(raw)' is not a platform; use one of ios, android, web, windows",
                field: field)
        }
    }
}
