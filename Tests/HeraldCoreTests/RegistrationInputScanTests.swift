import Foundation
import HeraldCore
import Testing

/// `RegistrationInput.scan` reads registration bodies without `JSONDecoder`: whatever it accepts
/// must equal the decoder's reading, and it must give up (nil) on whatever else, so that the
/// decoder answers (and names the field at fault) as before.
@Suite struct RegistrationInputScanTests {
    static func scanned(_ body: String) -> RegistrationInput? {
        Data(body.utf8).withUnsafeBytes { RegistrationInput.scan($0) }
    }

    static func decoded(_ body: String) throws -> RegistrationInput {
        try JSONDecoder().decode(RegistrationInput.self, from: Data(body.utf8))
    }

    /// The iOS SDK's POST, as `scripts/bench/registration.lua` sends it.
    static let sdkBody = #"""
        {"os":"ios","os_version":"17.2","device_model":"iPhone 15","device_manufacturer":"Apple","registration_token":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","tags":["news","sports"]}
        """#

    @Test func theSDKsBodyIsScannedAsTheDecoderReadsIt() throws {
        let input = try #require(Self.scanned(Self.sdkBody))
        #expect(input == (try Self.decoded(Self.sdkBody)))
        #expect(input.os == "ios")
        #expect(input.deviceModel == .set("iPhone 15"))
        #expect(input.deviceAlias == .unchanged)
        #expect(input.tags == .replace(["news", "sports"]))
        #expect(input.badge == nil && input.quietTime == nil)
    }

    /// Bodies the scanner reads; each must equal the decoder's reading.
    @Test(arguments: [
        #"{}"#,
        #" { "os" : "android" , "tags" : [ ] } "#,
        #"{"os":null,"registration_token":null,"tags":null,"device_alias":"","custom_user_id":null}"#,
        #"{"os_version":"","time_zone":"Europe/Paris","tags":["Ünïcödé","日本","a","a"]}"#,
        #"{"badge":0}"#, #"{"badge":null}"#, #"{"badge":-1}"#, #"{"badge":-0}"#, #"{"badge":9223372036854775807}"#,
        // Keys only an import line has: the decoder ignores them, and so does the scan.
        #"{"device_uuid":"x","platform_uuid":null,"active":true,"created_at":1,"updated_at":2,"os":"ios"}"#,
    ])
    func plainBodiesAreScannedAsDecoded(_ body: String) throws {
        let scanned = try #require(Self.scanned(body), "\(body)")
        #expect(scanned == (try Self.decoded(body)), "\(body)")
    }

    /// Bodies left to the decoder: escapes (a NUL may hide behind one), control characters,
    /// keys the scan does not read, other types, repeated keys, anything not one object.
    @Test(arguments: [
        #"{"os":"i\u0000os"}"#, #"{"os":"a\"b"}"#, "{\"os\":\"a\u{1}b\"}",
        #"{"quiet_time":{"start":"22:00","end":"07:00"}}"#, #"{"quiet_time":null}"#,
        #"{"tags":{"subscribe":["a"],"unsubscribe":[]}}"#, #"{"tags":[1]}"#, #"{"tags":"a"}"#,
        #"{"os":1}"#, #"{"badge":1.5}"#, #"{"badge":"1"}"#, #"{"unknown":"x"}"#, #"{"os":"a","os":"b"}"#,
        #"[]"#, #"{"os":"ios"} x"#, #"{"os":"ios""#, "",
    ])
    func otherBodiesAreLeftToTheDecoder(_ body: String) {
        #expect(Self.scanned(body) == nil, "\(body)")
    }
}
