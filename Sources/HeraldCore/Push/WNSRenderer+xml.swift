extension WNSRenderer {
    /// `<toast …><visual><binding template="…">` images and texts `</binding></visual></toast>`.
    static func toastXML(template: String, texts: [(Int?, String)], images: [(Int?, String)], launch: String?, duration: String?) -> String
    {
        var xml = "<toast"
        if let launch { xml += #" launch="\#(escaped(launch))""# }
        if let duration { xml += #" duration="\#(escaped(duration))""# }
        xml += ">" + visual(template: template, texts: texts, images: images) + "</toast>"
        return xml
    }

    /// `<tile><visual><binding template="…">` images and texts `</binding></visual></tile>`.
    static func tileXML(template: String, texts: [(Int?, String)], images: [(Int?, String)]) -> String {
        "<tile>" + visual(template: template, texts: texts, images: images) + "</tile>"
    }

    private static func visual(template: String, texts: [(Int?, String)], images: [(Int?, String)]) -> String {
        var xml = #"<visual><binding template="\#(escaped(template))">"#
        for (id, source) in images {
            xml += "<image" + (id.map { #" id="\#($0)""# } ?? "") + #" src="\#(escaped(source))"/>"#
        }
        for (id, text) in texts {
            xml += "<text" + (id.map { #" id="\#($0)""# } ?? "") + ">" + escaped(text) + "</text>"
        }
        return xml + "</binding></visual>"
    }

    /// `text` safe in XML content and in attribute values (quoted with `"` or `'`): the five
    /// markup characters as entities, and characters XML 1.0 cannot carry at all (control
    /// characters other than tab, line feed and carriage return; U+FFFE, U+FFFF) as U+FFFD.
    package static func escaped(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                out.unicodeScalars.append("\u{FFFD}")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The name of a document's root element: after a byte order mark, white space, the XML
    /// declaration, processing instructions and comments; nil when there is none.
    package static func rootElement(of xml: String) -> String? {
        var rest = Substring(xml)
        if rest.hasPrefix("\u{FEFF}") { rest = rest.dropFirst() }
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            if rest.hasPrefix("<?") {
                guard let after = rest.after("?>") else { return nil }
                rest = after
            } else if rest.hasPrefix("<!--") {
                guard let after = rest.after("-->") else { return nil }
                rest = after
            } else {
                break
            }
        }
        guard rest.hasPrefix("<") else { return nil }
        let name = rest.dropFirst().prefix { !" \t\n\r/>".contains($0) }
        guard !name.isEmpty, rest.dropFirst(name.count + 1).first != nil else { return nil }
        return String(name)
    }
}

extension Substring {
    /// What follows the first `terminator`, or nil when there is none.
    fileprivate func after(_ terminator: String) -> Substring? {
        var rest = self
        while !rest.isEmpty {
            if rest.hasPrefix(terminator) { return rest.dropFirst(terminator.count) }
            rest = rest.dropFirst()
        }
        return nil
    }
}
