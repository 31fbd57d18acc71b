extension WNSRenderer {
    /// `custom.windows8.options`: the toast's launch argument and duration, and the `X-WNS-*`
    /// headers a notification of the kind may carry.
    struct Options {
        var launch: String?
        var duration: String?
        var tag: String?
        var group: String?
        var suppressPopup = false
        var cachePolicy: WNSNotification.CachePolicy?

        init(_ value: JSONValue?, kind: WNSNotification.Kind, field: String) throws(ValidationError) {
            let members: [String: JSONValue]
            switch value {
            case nil, .null?: return
            case .object(let object)?: members = object
            default: throw ValidationError(code: "invalid_type", message: "must be an object", field: field)
            }
            for (name, member) in members.sorted(by: { $0.key < $1.key }) where member != .null {
                let path = "\(field).\(name)"
                guard WNSRenderer.optionKeys.contains(name) else {
                    throw ValidationError(
                        message: "'\(name)' is not a Windows option (\(WNSRenderer.optionKeys.joined(separator: ", ")))", field: path)
                }
                let forToasts = ["launch", "duration", "group", "suppress_popup"].contains(name)
                if forToasts && kind != .toast || name == "tag" && kind != .toast && kind != .tile {
                    throw ValidationError(message: "\(name) does not apply to a \(kind.name)", field: path)
                }
                if name == "suppress_popup" {
                    guard case .bool(let flag) = member else {
                        throw ValidationError(code: "invalid_type", message: "must be true or false", field: path)
                    }
                    suppressPopup = flag
                    continue
                }
                guard let text = member.stringValue else {
                    throw ValidationError(code: "invalid_type", message: "must be a string", field: path)
                }
                switch name {
                case "launch":
                    launch = text
                case "duration":
                    guard text == "short" || text == "long" else {
                        throw ValidationError(message: "must be short or long", field: path)
                    }
                    duration = text
                case "tag", "group":
                    guard !text.isEmpty, text.count <= WNSRenderer.maximumTagLength else {
                        throw ValidationError(message: "must be 1 to \(WNSRenderer.maximumTagLength) characters", field: path)
                    }
                    if name == "tag" { tag = text } else { group = text }
                default:  // cache_policy
                    guard let policy = WNSNotification.CachePolicy(rawValue: text) else {
                        throw ValidationError(message: "must be cache or no-cache", field: path)
                    }
                    cachePolicy = policy
                }
            }
        }

        /// The notification with these headers set.
        func apply(to notification: WNSNotification) -> WNSNotification {
            var notification = notification
            notification.tag = tag
            notification.group = group
            notification.suppressPopup = suppressPopup
            notification.cachePolicy = cachePolicy
            return notification
        }
    }
}
