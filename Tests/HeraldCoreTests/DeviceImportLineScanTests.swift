import Foundation
import HeraldCore
import Testing

/// `DeviceImportLine.scan` reads the lines an export writes without `JSONDecoder`: whatever it
/// accepts must decode to the same value as through `JSONDecoder`, and whatever it is not sure
/// of it must give up (nil), so that the decoder answers as before.
@Suite struct DeviceImportLineScanTests {
    static let exported = #"""
        {"device_uuid":"0b5c6a58-1e0f-4e8e-9d4b-7f1a2b3c4d5e","platform_uuid":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","os":"android-fcm","os_version":"14","device_model":"Pixel 8","device_manufacturer":"Google","device_alias":null,"registration_token":"fcm-token:APA91b","tags":["news","sport"],"custom_user_id":"user-1","time_zone":"Europe/Paris","active":true,"created_at":1700000000000,"updated_at":1700000000001,"badge":3}
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
        #expect(line.registration.badge == .int(3))
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
        #"{"badge":0}"#, #"{"badge":null}"#, #"{"badge":-1}"#,  // -1: read, then refused by `validated` as the decoder's is
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
        #"{"badge":2.0}"#,
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
        #"{"os":1}"#,  // a string key with another type
        #"{"device_uuid":true}"#,
        #"{"os_version":14}"#,  // a text field with another type
        #"{"time_zone":["Europe/Paris"]}"#,
        #"{"os" "ios"}"#,  // no colon
        #"{"os":"ios" "os_version":"1"}"#,  // no comma between members
        #"{"tags":["a" "b"]}"#,  // no comma between tags
        #"{"tags":nul}"#,
        #"{"active":tru}"#,
        #"{"created_at":-}"#,  // a sign without digits
        #"{1:2}"#,  // a key that is not a string
        "{\"os\":\"a\tb\"}",  // a control character
        "",
    ])
    func otherLinesAreLeftToTheDecoder(_ line: String) {
        #expect(Self.scanned(line) == nil, "\(line)")
    }

    /// Every line one edit away from an exported one (a byte dropped, inserted, or replaced by a
    /// byte JSON gives a meaning to): whatever the scanner reads, the decoder reads the same, and
    /// nothing the decoder refuses is read.
    @Test func whatTheScannerReadsOfAnyNearLineTheDecoderReadsTheSame() throws {
        let line = Array(Self.exported.utf8)
        let bytes = Array(#"{}[],:"\ -0123456789.eEntfu"#.utf8) + [0x09, 0x0a, 0x00, 0xc3, 0xff]
        var variants: [[UInt8]] = []
        for index in line.indices {
            var dropped = line
            dropped.remove(at: index)
            variants.append(dropped)
            for byte in bytes {
                var inserted = line
                inserted.insert(byte, at: index)
                variants.append(inserted)
                if byte != line[index] {
                    var replaced = line
                    replaced[index] = byte
                    variants.append(replaced)
                }
            }
        }
        var read = 0
        for variant in variants {
            guard let scanned = variant.withUnsafeBytes({ DeviceImportLine.scan($0) }) else { continue }
            read += 1
            let text = String(decoding: variant, as: UTF8.self)
            let decoded = try #require(
                try? JSONDecoder().decode(DeviceImportLine.self, from: Data(variant)), "the scanner read what the decoder refuses: \(text)")
            Self.expectSame(scanned, decoded, text)
        }
        // Most edits inside a string value leave a line both read: the comparison above is not empty.
        #expect(read > variants.count / 4, "\(read) of \(variants.count)")
    }

    @Test func invalidUTF8IsLeftToTheDecoder() {
        var bytes = Array(#"{"os":"ab"}"#.utf8)
        bytes[7] = 0xff
        #expect(Data(bytes).withUnsafeBytes { DeviceImportLine.scan($0) } == nil)
    }
}
