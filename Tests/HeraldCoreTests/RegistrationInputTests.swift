import Crypto
import Foundation
import HeraldCore
import Testing

@Suite struct RegistrationInputTests {
    func decode(_ json: String) throws -> RegistrationInput {
        try JSONDecoder().decode(RegistrationInput.self, from: Data(json.utf8))
    }

    @Test func readsTheIOSSDKPost() throws {
        let input = try decode(
            #"""
            {"registration_token":"B50EDAC575BFBA07DD019B28B2AF7189A3DDDA17C806EF14A9ABBFD00533F67E","os":"ios",
             "os_version":"10.3.1","device_manufacturer":"Apple","device_model":"iPhone 7","tags":["beta","Gamma"]}
            """#)
        let registration = try input.validated(for: .ios, requireToken: true)
        #expect(registration.registrationToken == "b50edac575bfba07dd019b28b2af7189a3ddda17c806ef14a9abbfd00533f67e")
        #expect(registration.os == "ios")
        #expect(registration.tags == .replace(["beta", "gamma"]))
        #expect(registration.deviceAlias == .unchanged)
        #expect(registration.customUserID == .unchanged)
    }

    @Test func readsTheAndroidSDKPutWithDeltaTagsAndEmptyStrings() throws {
        let input = try decode(
            #"""
            {"registration_token":"fcm:APA91b-token_1","os_version":"8.1.0","device_model":"Pixel","device_manufacturer":"Google",
             "device_alias":"","custom_user_id":"","tags":{"subscribe":["News"],"unsubscribe":[]}}
            """#)
        let registration = try input.validated(for: .android, requireToken: false)
        #expect(registration.os == nil)
        #expect(registration.deviceAlias == .clear)
        #expect(registration.customUserID == .clear)
        #expect(registration.tags == .delta(subscribe: ["news"], unsubscribe: []))
    }

    @Test func acceptsTheAndroidFCMOsNameAndRefusesBaidu() throws {
        #expect(
            try decode(#"{"os":"android-fcm","registration_token":"t"}"#).validated(for: .android, requireToken: true).os == "android-fcm")
        let error = #expect(throws: ValidationError.self) {
            try decode(#"{"os":"android-baidu","registration_token":"t"}"#).validated(for: .android, requireToken: true)
        }
        #expect(error?.field == "os")
    }

    @Test func explainsRetiredPlatforms() throws {
        for os in ["windowsPhone", "bb10", "gcm"] {
            let error = #expect(throws: ValidationError.self) {
                try decode(#"{"os":"\#(os)","registration_token":"t"}"#).validated(for: .android, requireToken: true)
            }
            #expect(error?.code == "platform_retired")
            #expect(error?.message.contains("retired") == true)
        }
    }

    @Test func refusesAnOsOfAnotherPlatformOrUnknown() throws {
        let mismatch = #expect(throws: ValidationError.self) {
            try decode(#"{"os":"android","registration_token":"abcd"}"#).validated(for: .ios, requireToken: true)
        }
        #expect(mismatch?.code == "platform_mismatch")
        let unknown = #expect(throws: ValidationError.self) {
            try decode(#"{"os":"symbian","registration_token":"abcd"}"#).validated(for: .ios, requireToken: true)
        }
        #expect(unknown?.code == "invalid_platform")
    }

    @Test(arguments: ["abc", "zz", "ab cd", "<abcd>", ""])
    func refusesMalformedAPNsTokens(_ token: String) throws {
        let error = #expect(throws: ValidationError.self) {
            try RegistrationInput(registrationToken: token).validated(for: .ios, requireToken: true)
        }
        #expect(error?.field == "registration_token")
    }

    @Test func requiresATokenOnlyForNewRegistrations() throws {
        let error = #expect(throws: ValidationError.self) { try RegistrationInput().validated(for: .ios, requireToken: true) }
        #expect(error?.field == "registration_token")
        #expect(try RegistrationInput().validated(for: .ios, requireToken: false).registrationToken == nil)
    }

    @Test func limitsTagCountAndLength() throws {
        let many = (0...1024).map { "t\($0)" }
        let count = #expect(throws: ValidationError.self) {
            try RegistrationInput(registrationToken: "ab", tags: .replace(many)).validated(for: .ios, requireToken: true)
        }
        #expect(count?.field == "tags")
        let long = #expect(throws: ValidationError.self) {
            try RegistrationInput(registrationToken: "ab", tags: .replace(["ok", String(repeating: "x", count: 256)]))
                .validated(for: .ios, requireToken: true)
        }
        #expect(long?.field == "tags[1]")
        let exactly = (0..<1023).map { "t\($0)" } + ["T0"]
        #expect(
            try RegistrationInput(registrationToken: "ab", tags: .replace(exactly)).validated(for: .ios, requireToken: true).tags
                == .replace((0..<1023).map { "t\($0)" }))
    }

    @Test func reportsTheFieldOfAWrongType() throws {
        #expect(throws: DecodingError.self) { try decode(#"{"tags":"beta"}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"tags":[1]}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"os":5}"#) }
        #expect(throws: DecodingError.self) { try decode(#"{"tags":{"subscribe":"x"}}"#) }
    }

    @Test func validatesWebSubscriptions() throws {
        let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        let auth = Base64URL.encode(Array(repeating: 9, count: 16))
        let token =
            #"{"endpoint":"https://push.example.net/send/abc","keys":{"p256dh":"\#(Base64URL.encode(Array(key)))","auth":"\#(auth)"}}"#
        let normalized = try RegistrationToken.normalize(token, for: .web)
        #expect(normalized.contains("https://push.example.net/send/abc"))
        let http = #expect(throws: ValidationError.self) {
            try RegistrationToken.normalize(token.replacingOccurrences(of: "https://", with: "http://"), for: .web)
        }
        #expect(http?.field == "registration_token.endpoint")
        let badAuth = #expect(throws: ValidationError.self) {
            try RegistrationToken.normalize(token.replacingOccurrences(of: auth, with: "AAAA"), for: .web)
        }
        #expect(badAuth?.field == "registration_token.keys.auth")
        let badKey = #expect(throws: ValidationError.self) {
            try RegistrationToken.normalize(token.replacingOccurrences(of: Base64URL.encode(Array(key)), with: "AAAA"), for: .web)
        }
        #expect(badKey?.field == "registration_token.keys.p256dh")
    }

    @Test func validatesWindowsChannelsAndFCMTokens() throws {
        #expect(try RegistrationToken.normalize("https://db5.notify.windows.com/?token=abc", for: .windows).hasPrefix("https://"))
        #expect(throws: ValidationError.self) { try RegistrationToken.normalize("http://x/", for: .windows) }
        #expect(throws: ValidationError.self) { try RegistrationToken.normalize("has space", for: .android) }
    }
}
