/// Which devices can show interactive notifications (actions on the notification), for a push's
/// `"interactive-only": true`: as the Pivotal service defined it, iOS 8 and later and Android 4.1
/// and later. A device that did not report its OS version is not counted as able.
package enum InteractivePush {
    /// Whether a device of `type` reporting `osVersion` supports interactive notifications.
    package static func isSupported(by type: PlatformType, osVersion: String?) -> Bool {
        guard let osVersion else { return false }
        let parts = osVersion.split(separator: ".", omittingEmptySubsequences: false).prefix(2).map { part in
            Int(part.prefix { $0.isNumber }) ?? -1
        }
        guard let major = parts.first, major >= 0 else { return false }
        let minor = parts.count > 1 ? max(parts[1], 0) : 0
        switch type {
        case .ios: return major >= 8
        case .android: return major > 4 || (major == 4 && minor >= 1)
        case .web, .windows: return false
        }
    }
}
