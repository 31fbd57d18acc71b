import Foundation
import HeraldCore
import Testing

/// `DeviceImportLine.scan` reads the lines an export writes without `JSONDecoder`: whatever it
/// accepts must decode to the same value as through `JSONDecoder`, and whatever it is not sure
/// of it must give up (nil), so that the decoder answers as before.
@Suite struct DeviceImportLineScanTests {
    static let exported = #"""
        {"device_uuid":"0b5c6a58-1e0f-4e8e-9d4b-7f1a2b3c4d5e","platform_uuid":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","os":"android-fcm","os_version":"14","device_model":"Pixel 8","device_manufacturer":"Google","device_alias":null,"registration_token":"fcm-token:APA91b","tags":["news","sport"],"custom_user_id":"user-1","time_zone":"Europe/Paris","active":true,"created_at":1700000000000,"updated_at":1700000000001}
        """#

    static func scanned(_ line: String) -> DeviceImportLine? {
        Data(line.utf8).withUnsafeBytes { DeviceImportLine.scan($0) }
    }

    static func decoded(_ line: String) throws -> DeviceImportLine {
        try JSONDecoder().decode(DeviceImportLine.self, from: Data(line.utf8))
    }

    static func expectSame(_ scanned: DeviceImportLine, _ decoded: DeviceImportLine, _ line: String) {
        #expect(scanned.deviceUUID == decoded.deviceUUID, "\(line)")
        #expect(scanned.platformUUID == decoded.platformUUID, "\(line)")
        #expect(scanned.registration == decoded.registration, "\(line)")
        #expect(scanned.active == decoded.active, "\(line)")
        #expect(scanned.createdAt == decoded.createdAt, "\(line)")
        #expect(scanned.updatedAt == decoded.updatedAt, "\(line)")
    }

    @Test func anExportedLineIsScannedAsTheDecoderReadsIt() throws {
        let line = try #require(Self.scanned(Self.exported))
        Self.expectSame(line, try Self.decoded(Self.exported), Self.exported)
        #expect(line.deviceUUID == "0b5c6a58-1e0f-4e8e-9d4b-7f1a2b3c4d5e")
        #expect(line.registration.os == "android-fcm")
        #expect(line.registration.deviceAlias == .clear)
        #expect(line.registration.tags == .replace(["news", "sport"]))
        #expect(line.registration.timeZone == .set("Europe/Paris"))
        #expect(line.active == true)
        #expect(line.updatedAt == 1_700_000_000_001)
    }

    /// Lines the scanner reads; each must equal the decoder's reading.
    @Test(arguments: [
        #"{}"#,
        #"  { "device_uuid" : "a" , "tags" : [ ] }  "#,
        "\t{\"os\":\"ios\",\"registration_token\":null,\"tags\":null}\r",
        #"{"os_version":"","device_alias":"","custom_user_id":null,"time_zone":"","active":false}"#,
        #"{"created_at":0,"updated_at":-0,"tags":["Ünïcödé","日本"]}"#,
        #"{"created_at":-12,"updated_at":9223372036854775807}"#,
        #"{"created_at":null,"updated_at":null,"active":null,"device_uuid":null,"platform_uuid":null,"os":null}"#,
        #"{"tags":["a","a","B"],"device_model":"x y/z"}"#,
    ])
    func plainLinesAreScannedAsDecoded(_ line: String) throws {
        let scanned = try #require(Self.scanned(line), "\(line)")
        Self.expectSame(scanned, try Self.decoded(line), line)
    }

    /// Lines the scanner leaves to the decoder (which reads some and refuses others).
    @Test(arguments: [
        #"{"device_model":"Pixel \"8\""}"#,  // an escape
        #"{"device_model":"Pixel\u00208"}"#,
        #"{"device\u005fuuid":"a"}"#,  // an escaped key
        #"{"unknown":1}"#,  // a key the line does not have
        #"{"os":"ios","os":"android"}"#,  // a repeated key
        #"{"created_at":1.5}"#,
        #"{"created_at":1e3}"#,
        #"{"created_at":01}"#,
        #"{"created_at":9223372036854775808}"#,
        #"{"created_at":"1"}"#,
        #"{"active":1}"#,
        #"{"tags":{"subscribe":["a"]}}"#,
        #"{"tags":["a",1]}"#,
        #"{"tags":["a",]}"#,
        #"{"os":"ios",}"#,
        #"{"os":"ios"} x"#,
        #"[{"os":"ios"}]"#,
        #"{"os":"ios""#,
        "{\"os\":\"a\tb\"}",  // a control character
        "",
    ])
    func otherLinesAreLeftToTheDecoder(_ line: String) {
        #expect(Self.scanned(line) == nil, "\(line)")
    }

    @Test func invalidUTF8IsLeftToTheDecoder() {
        var bytes = Array(#"{"os":"ab"}"#.utf8)
        bytes[7] = 0xff
        #expect(Data(bytes).withUnsafeBytes { DeviceImportLine.scan($0) } == nil)
    }
}
