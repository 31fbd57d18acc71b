import Foundation
import HeraldCore
import Testing

@Suite struct WNSRendererTests {
    let now: Int64 = 1_800_000_000_000

    func render(_ json: String, receiptID: String? = "receipt-1") throws -> WNSNotification? {
        let input = try JSONDecoder().decode(PushInput.self, from: Data(json.utf8))
        return try WNSRenderer.render(try input.validated(now: now), receiptID: receiptID, now: now)
    }

    func push(_ custom: String, body: String? = "Town Hall", extra: String = "") -> String {
        let bodyJSON = body.map { #""body":\#(JSONValue.string($0).jsonText),"# } ?? ""
        return #"{"message":{\#(bodyJSON)"custom":{\#(custom)}},"target":{"platforms":["windows"]}\#(extra)}"#
    }

    // MARK: The default toast

    @Test func theBodyBecomesAToastWithTheReceiptAsLaunchArgument() throws {
        let notification = try #require(try render(#"{"message":{"body":"Town Hall this Thursday"},"target":{"platforms":["windows"]}}"#))
        #expect(notification.kind == .toast)
        #expect(notification.contentType == "text/xml")
        #expect(
            notification.payloadText == #"""
                <toast launch="receiptId=receipt-1"><visual><binding template="ToastGeneric"><text>Town Hall this Thursday</text></binding></visual></toast>
                """#)
        #expect(notification.ttl == nil)
        #expect(notification.tag == nil && notification.group == nil && notification.cachePolicy == nil && !notification.suppressPopup)
        let anonymous = try #require(try render(#"{"message":{"body":"x"},"target":{"platforms":["windows"]}}"#, receiptID: nil))
        #expect(anonymous.payloadText.hasPrefix("<toast><visual>"))
    }

    @Test func theBodyIsXMLEscaped() throws {
        let notification = try #require(
            try render(
                #"""
                {"message":{"body":"<b>Tom & \"Jerry\"'s</b> ]]> \u0001bell\u0007 tab\tend"},"target":{"platforms":["windows"]}}
                """#, receiptID: "a&b\"<c>"))
        #expect(
            notification.payloadText == #"""
                <toast launch="receiptId=a&amp;b&quot;&lt;c&gt;"><visual><binding template="ToastGeneric"><text>&lt;b&gt;Tom &amp; &quot;Jerry&quot;&apos;s&lt;/b&gt; ]]&gt; \#u{FFFD}bell\#u{FFFD} tab\#tend</text></binding></visual></toast>
                """#)
    }

    @Test func escapingLeavesOtherTextAlone() {
        #expect(WNSRenderer.escaped("Grüße, 東京 🎉\nnext line") == "Grüße, 東京 🎉\nnext line")
        #expect(WNSRenderer.escaped("&amp;") == "&amp;amp;")
        #expect(WNSRenderer.escaped("\u{FFFF}\u{0}") == "\u{FFFD}\u{FFFD}")
    }

    @Test func expiryBecomesTheTTLInSecondsRoundedUp() throws {
        let later = try render(#"{"message":{"body":"x"},"target":{"platforms":["windows"]},"expiryTime":\#(now + 90_500)}"#)
        #expect(later?.ttl == 91)
        let past = try render(#"{"message":{"body":"x"},"target":{"platforms":["windows"]},"expiryTime":\#(now - 5000)}"#)
        #expect(past?.ttl == 1)
    }

    @Test func aPushWithNothingForWindowsRendersNothing() throws {
        #expect(try render(#"{"message":{"custom":{"ios":{"badge":1}}},"target":{"platforms":["ios"]}}"#) == nil)
    }

    // MARK: custom.windows8

    @Test func theSeedsTileExampleRendersItsLegacyTemplateWithNumberedTexts() throws {
        let notification = try #require(
            try render(
                push(
                    #"""
                    "windows8":{"template_name":"TileSquareBlock","template_fields":{"textField1":"text1","textField2":"text2"},"options":{},"type":"tile"}
                    """#)))
        #expect(notification.kind == .tile)
        #expect(
            notification.payloadText == #"""
                <tile><visual><binding template="TileSquareBlock"><text id="1">text1</text><text id="2">text2</text></binding></visual></tile>
                """#)
    }

    @Test func aToastTemplateWithImagesTextsAndOptions() throws {
        let notification = try #require(
            try render(
                push(
                    #"""
                    "windows8":{"type":"toast","template_name":"ToastImageAndText02",
                      "template_fields":{"textField2":"Thursday, 10:00","text1":"Town <Hall>","imageField1":"https://example.com/a.png?x=1&y=2","textField10":7},
                      "options":{"launch":"story=42","duration":"long","tag":"townhall","group":"news","suppress_popup":true,"cache_policy":"no-cache"}}
                    """#)))
        #expect(notification.kind == .toast)
        #expect(
            notification.payloadText == #"""
                <toast launch="story=42" duration="long"><visual><binding template="ToastImageAndText02"><image id="1" src="https://example.com/a.png?x=1&amp;y=2"/><text id="1">Town &lt;Hall&gt;</text><text id="2">Thursday, 10:00</text><text id="10">7</text></binding></visual></toast>
                """#)
        #expect(notification.tag == "townhall")
        #expect(notification.group == "news")
        #expect(notification.suppressPopup)
        #expect(notification.cachePolicy == .noCache)
    }

    @Test func theBodyFillsATemplateWithoutTexts() throws {
        let tile = try #require(try render(push(#""windows":{"type":"tile"}"#)))
        #expect(tile.payloadText == #"<tile><visual><binding template="TileMedium"><text>Town Hall</text></binding></visual></tile>"#)
        let legacy = try #require(try render(push(#""windows8":{"template_name":"ToastText01"}"#)))
        #expect(
            legacy.payloadText == #"""
                <toast launch="receiptId=receipt-1"><visual><binding template="ToastText01"><text id="1">Town Hall</text></binding></visual></toast>
                """#)
    }

    @Test func badgesTakeANumberOrAGlyph() throws {
        let number = try #require(try render(push(#""windows8":{"type":"badge","template_fields":{"value":7}}"#)))
        #expect(number.kind == .badge)
        #expect(number.payloadText == #"<badge value="7"/>"#)
        let glyph = try render(
            push(#""windows8":{"type":"badge","template_fields":{"value":"newMessage"},"options":{"cache_policy":"cache"}}"#))
        #expect(glyph?.payloadText == #"<badge value="newMessage"/>"#)
        #expect(glyph?.cachePolicy == .cache)
    }

    @Test func rawNotificationsCarryAPayloadOrJSON() throws {
        let text = try #require(try render(push(#""windows8":{"type":"raw","payload":"sync:inbox"}"#)))
        #expect(text.kind == .raw)
        #expect(text.contentType == "application/octet-stream")
        #expect(text.payloadText == "sync:inbox")
        let object = try render(push(#""windows8":{"type":"wns/raw","payload":{"folder":"inbox","count":3}}"#))
        #expect(object?.payloadText == #"{"count":3,"folder":"inbox"}"#)
        let fields = try render(push(#""windows8":{"type":"raw","template_fields":{"folder":"inbox"}}"#))
        #expect(fields?.payloadText == #"{"folder":"inbox","message":"Town Hall","receiptId":"receipt-1"}"#)
    }

    @Test func wholeXMLIsSentAsGivenWhenItsRootMatches() throws {
        let xml =
            #"<?xml version="1.0"?><!-- adaptive --><toast scenario="reminder"><visual><binding template="ToastGeneric"><text>Hi</text></binding></visual></toast>"#
        let notification = try #require(try render(push(#""windows8":{"xml":\#(JSONValue.string(xml).jsonText)}"#)))
        #expect(notification.payloadText == xml)
        let error = #expect(throws: ValidationError.self) {
            try render(push(#""windows8":{"type":"tile","xml":\#(JSONValue.string(xml).jsonText)}"#))
        }
        #expect(error?.field == "message.custom.windows8.xml")
        #expect(error?.message.contains("<tile>") == true)
    }

    @Test func rootElementReadsPastTheProlog() {
        #expect(WNSRenderer.rootElement(of: "\u{FEFF} <?xml version='1.0'?>\n<!-- c --><badge value='1'/>") == "badge")
        #expect(WNSRenderer.rootElement(of: "<tile>") == "tile")
        #expect(WNSRenderer.rootElement(of: "toast") == nil)
        #expect(WNSRenderer.rootElement(of: "<toast") == nil)
        #expect(WNSRenderer.rootElement(of: "<!-- unterminated <toast/>") == nil)
    }

    // MARK: custom.windowsPhone

    @Test func aWindowsPhoneToastBecomesAToastWithItsParameterAsLaunch() throws {
        let notification = try #require(
            try render(
                push(
                    #"""
                    "windowsPhone":{"template_fields":{"subtitle":"Thursday & Friday","parameter":"/Page.xaml?id=7"},"template":"toast"}
                    """#)))
        #expect(notification.kind == .toast)
        #expect(
            notification.payloadText == #"""
                <toast launch="/Page.xaml?id=7"><visual><binding template="ToastGeneric"><text>Town Hall</text><text>Thursday &amp; Friday</text></binding></visual></toast>
                """#)
    }

    @Test func windows8WinsOverWindowsPhone() throws {
        let notification = try render(
            push(#""windows8":{"type":"badge","template_fields":{"value":1}},"windowsPhone":{"template":"toast"}"#))
        #expect(notification?.kind == .badge)
    }

    @Test func aWindowsPhoneTile() throws {
        let notification = try #require(
            try render(
                push(
                    #""windowsPhone":{"template":"tile","template_fields":{"title":"News","content":"3 new","background_image":"/tile.png"}}"#
                )))
        #expect(notification.kind == .tile)
        #expect(
            notification.payloadText == #"""
                <tile><visual><binding template="TileMedium"><image src="/tile.png"/><text>News</text><text>3 new</text></binding></visual></tile>
                """#)
    }

    // MARK: Refusals

    @Test func namesTheFieldOfABadWindowsBlock() throws {
        let cases: [(String, String)] = [
            (#""windows8":{"type":"popup"}"#, "message.custom.windows8.type"),
            (#""windows8":{"type":7}"#, "message.custom.windows8.type"),
            (#""windows8":{"colour":"red"}"#, "message.custom.windows8.colour"),
            (#""windows8":{"template_fields":{"subtitle":"x"}}"#, "message.custom.windows8.template_fields.subtitle"),
            (#""windows8":{"template_fields":{"textField1":["x"]}}"#, "message.custom.windows8.template_fields.textField1"),
            (#""windows8":{"template_fields":"x"}"#, "message.custom.windows8.template_fields"),
            (#""windows8":{"template_name":"Toast Text\"01"}"#, "message.custom.windows8.template_name"),
            (#""windows8":{"options":{"tag":"seventeen-chars-x"}}"#, "message.custom.windows8.options.tag"),
            (#""windows8":{"options":{"duration":"forever"}}"#, "message.custom.windows8.options.duration"),
            (#""windows8":{"options":{"cache_policy":"sometimes"}}"#, "message.custom.windows8.options.cache_policy"),
            (#""windows8":{"options":{"suppress_popup":"yes"}}"#, "message.custom.windows8.options.suppress_popup"),
            (#""windows8":{"options":{"priority":"high"}}"#, "message.custom.windows8.options.priority"),
            (#""windows8":{"type":"tile","options":{"launch":"x"}}"#, "message.custom.windows8.options.launch"),
            (#""windows8":{"type":"badge","options":{"tag":"x"}}"#, "message.custom.windows8.options.tag"),
            (#""windows8":{"type":"badge"}"#, "message.custom.windows8.template_fields.value"),
            (#""windows8":{"type":"badge","template_fields":{"value":"-1"}}"#, "message.custom.windows8.template_fields.value"),
            (#""windows8":{"type":"badge","template_name":"B"}"#, "message.custom.windows8.template_name"),
            (#""windows8":{"payload":"x"}"#, "message.custom.windows8.payload"),
            (#""windows8":{"type":"raw","payload":"x","template_fields":{"a":"b"}}"#, "message.custom.windows8.payload"),
            (#""windows8":{"type":"raw","xml":"<toast/>"}"#, "message.custom.windows8.xml"),
            (#""windows8":{"xml":"<toast/>","template_name":"ToastText01"}"#, "message.custom.windows8.xml"),
            (#""windows8":{"xml":"<toast/>","options":{"launch":"x"}}"#, "message.custom.windows8.options"),
            (#""windows8":"toast""#, "message.custom.windows8"),
            (#""windowsPhone":{"template":"cycle"}"#, "message.custom.windowsPhone.template"),
            (#""windowsPhone":{"template":"toast","template_fields":{"count":"3"}}"#, "message.custom.windowsPhone.template_fields.count"),
            (#""windowsPhone":{"template":"toast","sound":"x"}"#, "message.custom.windowsPhone.sound"),
        ]
        for (custom, field) in cases {
            let error = #expect(throws: ValidationError.self, "\(custom)") { try render(push(custom)) }
            #expect(error?.field == field, "\(custom)")
        }
        let empty = #expect(throws: ValidationError.self) { try render(push(#""windows8":{"type":"tile"}"#, body: nil)) }
        #expect(empty?.code == "empty_notification")
        let emptyRaw = #expect(throws: ValidationError.self) { try render(push(#""windows8":{"type":"raw"}"#, body: nil)) }
        #expect(emptyRaw?.code == "empty_notification")
    }

    @Test func saysByHowMuchAPayloadIsOverTheLimit() throws {
        let fits = String(repeating: "a", count: WNSRenderer.maximumPayloadBytes)
        #expect(try render(push(#""windows8":{"type":"raw","payload":"\#(fits)"}"#))?.payload.count == 5000)
        let error = #expect(throws: ValidationError.self) {
            try render(push(#""windows8":{"type":"raw","payload":"\#(fits)é"}"#))
        }
        #expect(error?.code == "payload_too_large")
        #expect(error?.message == "the WNS notification would be 5002 bytes, 2 over WNS's 5000-byte limit")
        // Escaping counts: 1000 ampersands are 5000 bytes of text, and more inside the toast.
        let escaped = #expect(throws: ValidationError.self) {
            try render(#"{"message":{"body":"\#(String(repeating: "&", count: 1000))"},"target":{"platforms":["windows"]}}"#)
        }
        #expect(escaped?.message.contains("over WNS's 5000-byte limit") == true)
    }
}
