/// Renders the WNS notification of a push for Windows devices.
///
/// Without a Windows block, `message.body` becomes a toast:
/// `<toast launch="receiptId=…"><visual><binding template="ToastGeneric"><text>…</text></binding></visual></toast>`,
/// the text XML-escaped and the receipt id handed to the app as the launch argument.
///
/// `custom.windows8` (or `custom.windows`), in the shape of the Pivotal Push API, chooses more:
/// - `type`: `toast` (the default), `tile`, `badge` or `raw`;
/// - `template_name`: the binding template of a toast or tile (`ToastText02`, `TileSquareBlock`,
///   …; `ToastGeneric` and `TileMedium` by default);
/// - `template_fields`: `textFieldN` (or `textN`) become `<text id="N">`, `imageFieldN` (or
///   `imageN`) become `<image id="N" src="…"/>` (adaptive templates get them in order, without
///   ids); a badge takes `value`, a number or a glyph name; a raw notification gets them as JSON;
/// - `xml`: a whole toast, tile or badge document instead, sent as given (its root is checked);
/// - `payload`: the body of a raw notification (a string as is, other JSON as its text);
/// - `options`: `launch`, `duration` (`short`/`long`), `group` and `suppress_popup` for toasts,
///   `tag` for toasts and tiles, `cache_policy` (`cache`/`no-cache`) for any.
///
/// `custom.windowsPhone` (`template`: `toast`, `tile` or `raw`; `template_fields` `title`,
/// `subtitle`, `parameter` for a toast, `title`, `content`, `background_image` for a tile) is
/// read when there is no `windows8` block: Windows Phone 8.1 and later apps receive through WNS.
///
/// `expiryTime` becomes `X-WNS-TTL`, the seconds left rounded up (at least 1: a push already
/// expired is the delivery engine's to drop). A payload over WNS's 5000 bytes is refused.
package enum WNSRenderer {
    /// WNS refuses a notification body over 5000 bytes (413).
    package static let maximumPayloadBytes = 5000
    /// `X-WNS-Tag` and `X-WNS-Group` are at most 16 characters.
    package static let maximumTagLength = 16
    /// The length of a receipt id, used to check a payload before its receipt exists.
    package static let receiptPlaceholder = APNsRenderer.receiptPlaceholder
    /// The glyphs a badge may show instead of a number.
    package static let badgeGlyphs: Set<String> = [
        "none", "activity", "alarm", "alert", "attention", "available", "away", "busy", "error", "newMessage", "paused", "playing",
        "unavailable",
    ]

    /// The keys of `custom.windows8`, in the order messages list them.
    static let windows8Keys = ["type", "template_name", "template_fields", "xml", "payload", "options"]
    /// The keys of `custom.windows8.options`.
    static let optionKeys = ["launch", "duration", "tag", "group", "suppress_popup", "cache_policy"]
    /// Templates of the adaptive (Windows 10) schema, whose elements carry no ids.
    static let adaptiveTemplates: Set<String> = ["ToastGeneric", "TileSmall", "TileMedium", "TileWide", "TileLarge"]

    /// The notification for Windows devices, or nil when the push has nothing for them (no
    /// `message.body` and no Windows block).
    ///
    /// - Parameters:
    ///   - receiptID: the launch argument of a toast (`receiptId=…`) and a member of a raw
    ///     notification's JSON; nil to leave out.
    ///   - now: epoch milliseconds, to turn `expiryTime` into `X-WNS-TTL`.
    package static func render(_ push: Push, receiptID: String?, now: Int64) throws(ValidationError) -> WNSNotification? {
        var notification: WNSNotification
        var windows = try windowsBlock(push, key: "windows8")
        if windows == nil { windows = try windowsBlock(push, key: "windows") }
        if let (key, block) = windows {
            notification = try windows8(block, key: key, body: push.body, receiptID: receiptID)
        } else if let (key, block) = try windowsBlock(push, key: "windowsPhone") {
            notification = try windowsPhone(block, key: key, body: push.body, receiptID: receiptID)
        } else if let body = push.body {
            notification = WNSNotification(
                kind: .toast,
                payload: Array(
                    toastXML(
                        template: "ToastGeneric", texts: [(nil, body)], images: [], launch: receiptID.map(launchArgument), duration: nil
                    ).utf8))
        } else {
            return nil
        }
        if let expiresAt = push.expiresAt {
            notification.ttl = max(1, (expiresAt - now + 999) / 1000)
        }
        let size = notification.payload.count
        guard size <= maximumPayloadBytes else {
            throw ValidationError(
                code: "payload_too_large",
                message:
                    "the WNS notification would be \(size) bytes, \(size - maximumPayloadBytes) over WNS's \(maximumPayloadBytes)-byte limit",
                field: "message")
        }
        return notification
    }

    /// The launch argument a toast hands the app when it is tapped.
    package static func launchArgument(receiptID: String) -> String { "receiptId=\(receiptID)" }

    private static func windowsBlock(_ push: Push, key: String) throws(ValidationError) -> (String, [String: JSONValue])? {
        switch push.custom[key] {
        case nil, .null?: return nil
        case .object(let block)?: return (key, block)
        default: throw ValidationError(code: "invalid_type", message: "must be an object", field: "message.custom.\(key)")
        }
    }

    // MARK: custom.windows8

    private static func windows8(_ block: [String: JSONValue], key: String, body: String?, receiptID: String?) throws(ValidationError)
        -> WNSNotification
    {
        func field(_ name: String) -> String { "message.custom.\(key).\(name)" }
        for name in block.keys.sorted() where !windows8Keys.contains(name) {
            throw ValidationError(
                message: "'\(name)' is not a key of a Windows notification (\(windows8Keys.joined(separator: ", ")))", field: field(name))
        }
        let kind = try self.kind(block["type"], field: field("type"))
        let templateName = try string(block["template_name"], field: field("template_name"))
        let fields = try templateFields(block["template_fields"], field: field("template_fields"))
        let xml = try string(block["xml"], field: field("xml"))
        let options = try Options(block["options"], kind: kind, field: field("options"))
        let payloadValue = block["payload"] == .null ? nil : block["payload"]

        if payloadValue != nil && kind != .raw {
            throw ValidationError(
                message: "payload is the body of a raw notification; a \(kind.name) takes template_fields or xml", field: field("payload"))
        }
        if payloadValue != nil && fields != nil {
            throw ValidationError(code: "conflicting_fields", message: "give payload or template_fields, not both", field: field("payload"))
        }
        if let xml {
            guard let root = kind.rootElement else {
                throw ValidationError(message: "a raw notification takes payload, not xml", field: field("xml"))
            }
            if templateName != nil || fields != nil {
                throw ValidationError(
                    code: "conflicting_fields", message: "give xml or template_name and template_fields, not both", field: field("xml"))
            }
            if options.launch != nil || options.duration != nil {
                throw ValidationError(
                    code: "conflicting_fields", message: "with xml, launch and duration are attributes of its <toast> element",
                    field: field("options"))
            }
            guard rootElement(of: xml) == root else {
                throw ValidationError(message: "the xml of a \(kind.name) must have a <\(root)> root element", field: field("xml"))
            }
            return options.apply(to: WNSNotification(kind: kind, payload: Array(xml.utf8)))
        }

        let payload: String
        switch kind {
        case .toast, .tile:
            let template = templateName ?? (kind == .toast ? "ToastGeneric" : "TileMedium")
            guard !template.isEmpty, template.utf8.allSatisfy(isNameByte) else {
                throw ValidationError(message: "a template name is letters and digits, such as ToastText02", field: field("template_name"))
            }
            var (texts, images) = try elements(fields ?? [:], field: field("template_fields"))
            if texts.isEmpty, let body { texts = [(1, body)] }
            guard !texts.isEmpty || !images.isEmpty else {
                throw ValidationError(
                    code: "empty_notification",
                    message: "a Windows \(kind.name) needs message.body, text fields in template_fields, or xml",
                    field: field("template_fields"))
            }
            let numbered = !adaptiveTemplates.contains(template)
            let textElements = texts.map { (numbered ? $0.id : nil, $0.text) }
            let imageElements = images.map { (numbered ? $0.id : nil, $0.source) }
            if kind == .toast {
                let launch = options.launch ?? receiptID.map(launchArgument)
                payload = toastXML(
                    template: template, texts: textElements, images: imageElements, launch: launch, duration: options.duration)
            } else {
                payload = tileXML(template: template, texts: textElements, images: imageElements)
            }
        case .badge:
            if templateName != nil {
                throw ValidationError(message: "a badge has no template; give template_fields.value", field: field("template_name"))
            }
            payload = try badgeXML(fields ?? [:], field: field("template_fields"))
        case .raw:
            if templateName != nil {
                throw ValidationError(message: "a raw notification has no template; give payload", field: field("template_name"))
            }
            switch payloadValue {
            case .string(let text)?:
                payload = text
            case let value?:
                payload = value.jsonText
            case nil:
                payload = try rawJSON(fields: fields ?? [:], body: body, receiptID: receiptID, field: field("payload"))
            }
        }
        return options.apply(to: WNSNotification(kind: kind, payload: Array(payload.utf8)))
    }

    private static func kind(_ value: JSONValue?, field: String) throws(ValidationError) -> WNSNotification.Kind {
        switch value {
        case nil, .null?:
            return .toast
        case .string(let text)?:
            let name = text.lowercased()
            for kind in WNSNotification.Kind.allCases where kind.name == name || kind.rawValue == name {
                return kind
            }
            throw ValidationError(message: "must be toast, tile, badge or raw", field: field)
        default:
            throw ValidationError(code: "invalid_type", message: "must be toast, tile, badge or raw", field: field)
        }
    }

    /// `textFieldN`/`textN` and `imageFieldN`/`imageN`, each list ordered by N.
    private static func elements(_ fields: [String: String], field: String) throws(ValidationError)
        -> (texts: [(id: Int, text: String)], images: [(id: Int, source: String)])
    {
        var texts: [(id: Int, text: String)] = []
        var images: [(id: Int, source: String)] = []
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            if let id = numbered(name, prefixes: ["textField", "text"]) {
                texts.append((id, value))
            } else if let id = numbered(name, prefixes: ["imageField", "image"]) {
                images.append((id, value))
            } else {
                throw ValidationError(
                    message: "'\(name)' is not a template field: use textField1, textField2, … and imageField1, imageField2, …",
                    field: "\(field).\(name)")
            }
        }
        return (texts.sorted { $0.id < $1.id }, images.sorted { $0.id < $1.id })
    }

    /// N of `textField7` for the prefix `textField`; nil when the name is not a prefix and a number from 1.
    private static func numbered(_ name: String, prefixes: [String]) -> Int? {
        for prefix in prefixes where name.hasPrefix(prefix) {
            let digits = name.dropFirst(prefix.count)
            if !digits.isEmpty, digits.count <= 3, digits.allSatisfy(\.isASCIIDigit), let id = Int(digits), id >= 1 {
                return id
            }
        }
        return nil
    }

    private static func badgeXML(_ fields: [String: String], field: String) throws(ValidationError) -> String {
        for name in fields.keys.sorted() where name != "value" {
            throw ValidationError(message: "a badge takes only template_fields.value", field: "\(field).\(name)")
        }
        guard let value = fields["value"] else {
            throw ValidationError(
                code: "missing_field", message: "a badge needs template_fields.value: a number, or a glyph such as newMessage",
                field: "\(field).value")
        }
        let isNumber = !value.isEmpty && value.count <= 9 && value.allSatisfy(\.isASCIIDigit)
        guard isNumber || badgeGlyphs.contains(value) else {
            throw ValidationError(
                message: "a badge value is a number or one of the glyphs \(badgeGlyphs.sorted().joined(separator: ", "))",
                field: "\(field).value")
        }
        return #"<badge value="\#(escaped(value))"/>"#
    }

    /// A raw notification without a payload: `template_fields`, `message` and `receiptId` as JSON.
    private static func rawJSON(fields: [String: String], body: String?, receiptID: String?, field: String) throws(ValidationError)
        -> String
    {
        guard body != nil || !fields.isEmpty else {
            throw ValidationError(
                code: "empty_notification", message: "a raw notification needs payload, template_fields or message.body", field: field)
        }
        var object = fields.mapValues(JSONValue.string)
        if let body { object["message"] = .string(body) }
        if let receiptID { object["receiptId"] = .string(receiptID) }
        return JSONValue.object(object).jsonText
    }

    // MARK: custom.windowsPhone

    private static func windowsPhone(_ block: [String: JSONValue], key: String, body: String?, receiptID: String?) throws(ValidationError)
        -> WNSNotification
    {
        func field(_ name: String) -> String { "message.custom.\(key).\(name)" }
        for name in block.keys.sorted() where name != "template" && name != "template_fields" {
            throw ValidationError(
                message: "'\(name)' is not a key of a Windows Phone notification (template, template_fields)", field: field(name))
        }
        let fields = try templateFields(block["template_fields"], field: field("template_fields")) ?? [:]
        func take(_ allowed: [String]) throws(ValidationError) {
            for name in fields.keys.sorted() where !allowed.contains(name) {
                throw ValidationError(
                    message: "'\(name)' is not a field of this template (\(allowed.joined(separator: ", ")))",
                    field: field("template_fields.\(name)"))
            }
        }
        let template = try string(block["template"], field: field("template"))?.lowercased() ?? "toast"
        switch template {
        case "toast":
            try take(["title", "subtitle", "parameter"])
            let texts = [fields["title"] ?? body, fields["subtitle"]].compactMap { $0 }.map { (Int?.none, $0) }
            guard !texts.isEmpty else {
                throw ValidationError(
                    code: "empty_notification", message: "a toast needs message.body or a title or subtitle",
                    field: field("template_fields"))
            }
            let launch = fields["parameter"] ?? receiptID.map(launchArgument)
            let xml = toastXML(template: "ToastGeneric", texts: texts, images: [], launch: launch, duration: nil)
            return WNSNotification(kind: .toast, payload: Array(xml.utf8))
        case "tile":
            try take(["title", "content", "back_content", "background_image"])
            let texts = [fields["title"] ?? body, fields["content"] ?? fields["back_content"]].compactMap { $0 }.map { (Int?.none, $0) }
            let images = fields["background_image"].map { [(Int?.none, $0)] } ?? []
            guard !texts.isEmpty || !images.isEmpty else {
                throw ValidationError(
                    code: "empty_notification", message: "a tile needs message.body, a title, content or a background_image",
                    field: field("template_fields"))
            }
            return WNSNotification(kind: .tile, payload: Array(tileXML(template: "TileMedium", texts: texts, images: images).utf8))
        case "raw":
            let json = try rawJSON(fields: fields, body: body, receiptID: receiptID, field: field("template_fields"))
            return WNSNotification(kind: .raw, payload: Array(json.utf8))
        default:
            throw ValidationError(message: "must be toast, tile or raw", field: field("template"))
        }
    }

    // MARK: Values

    private static func string(_ value: JSONValue?, field: String) throws(ValidationError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw ValidationError(code: "invalid_type", message: "must be a string", field: field)
        }
    }

    /// An object of texts: strings as they are, numbers as their JSON text, null members left out.
    private static func templateFields(_ value: JSONValue?, field: String) throws(ValidationError) -> [String: String]? {
        switch value {
        case nil, .null?:
            return nil
        case .object(let members)?:
            var fields: [String: String] = [:]
            for (name, member) in members {
                switch member {
                case .null: continue
                case .string(let text): fields[name] = text
                case .int, .double: fields[name] = member.jsonText
                case .bool, .array, .object:
                    throw ValidationError(code: "invalid_type", message: "must be a string or a number", field: "\(field).\(name)")
                }
            }
            return fields
        default:
            throw ValidationError(code: "invalid_type", message: "must be an object of texts", field: field)
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".")
    }
}

extension WNSNotification.Kind {
    /// `toast`, `tile`, `badge` or `raw`.
    var name: String { String(rawValue.dropFirst("wns/".count)) }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
