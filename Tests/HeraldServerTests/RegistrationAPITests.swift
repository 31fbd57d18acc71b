import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldServer

@Suite struct RegistrationAPITests {
    let iosToken = "B50EDAC575BFBA07DD019B28B2AF7189A3DDDA17C806EF14A9ABBFD00533F67E"

    @Test(arguments: Backend.available)
    func theIOSSDKRegistersUpdatesReadsAndDeletes(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            // The iOS SDK: "Basic" and two spaces, upper-case hex, no tags key when there are none.
            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture, spaces: 2),
                body: body(
                    #"{"registration_token":"\#(iosToken)","os":"ios","os_version":"17.2","device_manufacturer":"Apple","device_model":"iPhone 15"}"#
                ))
            #expect(post.status == .ok)
            let created = try post.json()
            let uuid = try #require(created["device_uuid"] as? String)
            #expect(created["registration_token"] as? String == iosToken.lowercased())
            #expect(created["active"] as? Bool == true)
            #expect((created["tags"] as? [Any])?.isEmpty == true)

            // A PUT with a tag delta and "" to clear the custom user id.
            let put = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(fixture, spaces: 2),
                body: body(
                    #"{"registration_token":"\#(iosToken)","os":"ios","custom_user_id":"","tags":{"subscribe":["Breaking","local"]}}"#))
            #expect(put.status == .ok)
            let updated = try put.json()
            #expect(updated["device_uuid"] as? String == uuid)
            #expect((updated["tags"] as? [[String: String]])?.map { $0["text"] } == ["breaking", "local"])
            #expect(updated["device_model"] as? String == "iPhone 15")

            let get = try await client.execute(uri: "/v1/registration/\(uuid)", method: .get, headers: basic(fixture))
            #expect(get.status == .ok)
            #expect(try get.json()["os_version"] as? String == "17.2")

            let count = try await client.execute(uri: "/v1/registration/count/", method: .get, headers: basic(fixture))
            #expect(String(buffer: count.body) == "1")

            let delete = try await client.execute(uri: "/v1/registration/\(uuid)", method: .delete, headers: basic(fixture))
            #expect(delete.status == .noContent)
            let gone = try await client.execute(uri: "/v1/registration/\(uuid)", method: .get, headers: basic(fixture))
            #expect(gone.status == .notFound)
            #expect(try gone.error()["code"] as? String == "not_found")
        }
    }

    /// Another process deletes a platform this one still trusts from its credential cache (for
    /// up to a second): a registration then meets the database's foreign key. It is a 409 naming
    /// the conflict, not a 500. (The delete here goes straight to the database, as another
    /// process's would, so that this process's cache still holds the platform.)
    @Test(arguments: Backend.available)
    func aRegistrationToAPlatformDeletedByAnotherProcessIsAConflict(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let count = try await client.execute(uri: "/v1/registration/count/", method: .get, headers: basic(fixture))
            #expect(count.status == .ok)
            try await harness.store.database.query("DELETE FROM platforms WHERE id = \(fixture.platform.id)")
            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"\#(iosToken)","os":"ios"}"#))
            // Within the cache's second the foreign key refuses the device (409); past it the
            // platform is simply unknown (401). Never a 500.
            #expect(post.status == .conflict || post.status == .unauthorized, "\(post.status) \(String(buffer: post.body))")
            if post.status == .conflict {
                #expect(try post.error()["code"] as? String == "conflict")
            }
        }
    }

    @Test(arguments: Backend.available)
    func theAndroidSDKShapesAreAccepted(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store, type: .android)
            // Plain custom user ids, as apps that do not verify them send.
            _ = try await harness.store.applications.update(id: fixture.app.id, name: nil, description: nil, verifiesCustomUserID: false)
            let token = "dXk2:APA91bH-some_fcm-token"
            // Android always sends alias, custom id and tags, empty when unset; and joins URLs into "//v1/…".
            let post = try await client.execute(
                uri: "//v1/registration", method: .post, headers: basic(fixture, spaces: 2),
                body: body(
                    #"{"registration_token":"\#(token)","os":"android-fcm","os_version":"14","device_model":"Pixel 8","device_manufacturer":"Google","device_alias":"","custom_user_id":"","tags":[]}"#
                ))
            #expect(post.status == .ok)
            let uuid = try #require(try post.json()["device_uuid"] as? String)
            #expect(try post.json()["os"] as? String == "android-fcm")

            // No os on an Android PUT; both delta keys always present.
            let put = try await client.execute(
                uri: "//v1/registration/\(uuid)", method: .put, headers: basic(fixture, spaces: 2),
                body: body(
                    #"{"registration_token":"\#(token)","os_version":"14","device_alias":"Ann","custom_user_id":"ann@example.com","tags":{"subscribe":["news"],"unsubscribe":[]}}"#
                ))
            #expect(put.status == .ok)
            #expect(try put.json()["custom_user_id"] as? String == "ann@example.com")
            #expect(try put.json()["os"] as? String == "android-fcm")

            // A new POST of the same token (app reinstalled) keeps the device.
            let again = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture, spaces: 2),
                body: body(#"{"registration_token":"\#(token)","os":"android-fcm","tags":["sports"],"custom_user_id":"Ann@Example.com"}"#))
            #expect(try again.json()["device_uuid"] as? String == uuid)
            #expect(try again.json()["custom_user_id"] as? String == "Ann@Example.com")
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 1)
        }
    }

    /// Windows devices register WNS channel URIs, and only Microsoft's hosts are sent to.
    @Test(arguments: Backend.available)
    func aWindowsChannelMustBeOnMicrosoftsHosts(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store, type: .windows)
            let good = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"https://db5.notify.windows.com/w/?token=AwYAAAB","os":"windows8"}"#))
            #expect(good.status == .ok, "\(String(buffer: good.body))")
            let elsewhere = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"https://collector.example.com/w/?token=x","os":"windows8"}"#))
            #expect(elsewhere.status == .badRequest)
            #expect(try elsewhere.error()["field"] as? String == "registration_token")
        }
    }

    @Test(arguments: Backend.available)
    func trailingSlashesAreAccepted(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let post = try await client.execute(
                uri: "/v1/registration/", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"abcd","os":"ios"}"#))
            #expect(post.status == .ok)
            let list = try await client.execute(uri: "/v2/registrations/", method: .get, headers: appAuth(fixture))
            #expect(try list.json()["totalRegistrations"] as? Int == 1)
        }
    }

    @Test(arguments: Backend.available)
    func credentialsAreRequiredAndChecked(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let register = body(#"{"registration_token":"abcd"}"#)
            let cases: [HTTPFields] = [
                [:],
                basic(fixture.platform.id.uuidString, "wrong"),
                basic("not-a-uuid", fixture.platformSecret),
                appAuth(fixture),
                [.authorization: "Bearer \(harness.adminToken)"],
                [.authorization: "Basic !!!"],
            ]
            for headers in cases {
                let response = try await client.execute(uri: "/v1/registration", method: .post, headers: headers, body: register)
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Basic realm=\"herald\"")
                #expect(try response.error()["code"] as? String == "unauthorized")
            }
            let list = try await client.execute(uri: "/v2/registrations", method: .get, headers: basic(fixture))
            #expect(list.status == .unauthorized)
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 0)
        }
    }

    @Test(arguments: Backend.available)
    func oneAppsCredentialsNeverReachAnothersDevices(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let a = try await Fixture.make(harness.store)
            let b = try await Fixture.make(harness.store)
            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(a), body: body(#"{"registration_token":"abcd","tags":["x"]}"#))
            let uuid = try #require(try post.json()["device_uuid"] as? String)

            let read = try await client.execute(uri: "/v1/registration/\(uuid)", method: .get, headers: basic(b))
            #expect(read.status == .notFound)
            let change = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(b),
                body: body(#"{"device_alias":"stolen","registration_token":"ffff"}"#))
            #expect(change.status == .notFound)
            let delete = try await client.execute(uri: "/v1/registration/\(uuid)", method: .delete, headers: basic(b))
            #expect(delete.status == .notFound)
            let count = try await client.execute(uri: "/v1/registration/count", method: .get, headers: basic(b))
            #expect(String(buffer: count.body) == "0")
            let list = try await client.execute(uri: "/v2/registrations?q=\(uuid)", method: .get, headers: appAuth(b))
            #expect(try list.json()["totalRegistrations"] as? Int == 0)
            let byPlatform = try await client.execute(
                uri: "/v2/registrations?platformUuid=\(a.platform.id.uuidString)", method: .get, headers: appAuth(b))
            #expect(try byPlatform.json()["totalRegistrations"] as? Int == 0)

            let device = try #require(try await harness.store.devices.find(platformID: a.platform.id, uuid: UUID(uuidString: uuid)!))
            #expect(device.deviceAlias == nil)
            #expect(device.registrationToken == "abcd")
            #expect(try await harness.store.devices.count(platformID: b.platform.id) == 0)
        }
    }

    @Test(arguments: Backend.available)
    func registrationsArePagedAndFiltered(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            for index in 0..<23 {
                let tags = index < 3 ? #"["VIP"]"# : "[]"
                _ = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: basic(fixture),
                    body: body(#"{"registration_token":"\#(randomAPNsToken())","device_alias":"dev\#(index)","tags":\#(tags)}"#))
            }
            let first = try await client.execute(uri: "/v2/registrations", method: .get, headers: appAuth(fixture)).json()
            #expect(first["totalRegistrations"] as? Int == 23)
            #expect(first["totalPages"] as? Int == 2)
            #expect(first["page"] as? Int == 1)
            #expect(first["size"] as? Int == 20)
            #expect((first["registrations"] as? [Any])?.count == 20)
            let second = try await client.execute(uri: "/v2/registrations?page=2&size=20", method: .get, headers: appAuth(fixture)).json()
            #expect((second["registrations"] as? [Any])?.count == 3)
            let vip = try await client.execute(uri: "/v2/registrations?topic=vip&platform=ios", method: .get, headers: appAuth(fixture))
                .json()
            #expect(vip["totalRegistrations"] as? Int == 3)
            let alias = try await client.execute(uri: "/v2/registrations?q=DEV2", method: .get, headers: appAuth(fixture)).json()
            #expect(alias["totalRegistrations"] as? Int == 4)
            let android = try await client.execute(uri: "/v2/registrations?platform=android", method: .get, headers: appAuth(fixture))
                .json()
            #expect(android["totalRegistrations"] as? Int == 0)
            let none = try await client.execute(uri: "/v2/registrations?size=0", method: .get, headers: appAuth(fixture)).json()
            #expect((none["registrations"] as? [Any])?.isEmpty == true)
            #expect(none["totalRegistrations"] as? Int == 23)
            for bad in ["size=51", "size=-1", "size=x", "page=0", "page=abc", "platformUuid=nope", "platform=symbian"] {
                let response = try await client.execute(uri: "/v2/registrations?\(bad)", method: .get, headers: appAuth(fixture))
                #expect(response.status == .badRequest, "\(bad)")
                #expect(try response.error()["field"] as? String == String(bad.split(separator: "=")[0]))
            }
        }
    }

    @Test func versionNeedsNoCredentials() async throws {
        try await ServerHarness.run(.sqlite) { _, client in
            let response = try await client.execute(uri: "/v1/version", method: .get)
            #expect(response.status == .ok)
            #expect(try response.json()["version"] as? String == "1.6.0")
        }
    }
}

/// The registration answer is written by hand for speed and encoded for lists: both must agree.
@Suite struct RegistrationResponseShapeTests {
    @Test func theWrittenAndTheEncodedFormsAreTheSame() throws {
        for alias in [nil, "Ann's \"phone\"\n\\ é"] {
            let device = Device(
                id: 1, uuid: UUID(), applicationID: UUID(), platformID: UUID(), platformType: .ios, os: "ios",
                osVersion: "17.2", deviceAlias: alias, deviceModel: nil, deviceManufacturer: "Apple",
                registrationToken: "abcd", customUserID: "u\u{1}", tags: ["a", "b"], active: false, createdAt: 0, updatedAt: 0)
            let response = RegistrationResponse(device: device)
            let written = try JSONSerialization.jsonObject(with: Data(response.json().readableBytesView)) as? NSDictionary
            let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? NSDictionary
            #expect(written != nil)
            #expect(written == encoded)
        }
    }
}
