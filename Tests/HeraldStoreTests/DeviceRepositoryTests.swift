import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct DeviceRepositoryTests {
    func registration(_ token: String, tags: [String] = [], customUserID: String? = nil, alias: String? = nil) throws -> Registration {
        try RegistrationInput(
            os: "ios", deviceAlias: alias.map { .set($0) } ?? .unchanged, registrationToken: token,
            customUserID: customUserID.map { .set($0) } ?? .unchanged, tags: .replace(tags)
        ).validated(for: .ios, requireToken: true)
    }

    @Test(arguments: Backend.available)
    func reRegisteringATokenUpdatesTheSameDevice(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let token = randomAPNsToken()
            let first = try await db.store.devices.register(
                on: fixture.platform, try registration(token, tags: ["a", "b"], alias: "phone"))
            let second = try await db.store.devices.register(on: fixture.platform, try registration(token.uppercased(), tags: ["c"]))
            #expect(second.uuid == first.uuid)
            #expect(second.id == first.id)
            #expect(second.tags == ["c"])
            #expect(second.deviceAlias == nil)
            #expect(try await db.store.devices.count(platformID: fixture.platform.id) == 1)
            #expect(try await db.store.devices.find(platformID: fixture.platform.id, uuid: first.uuid)?.tags == ["c"])
        }
    }

    @Test(arguments: Backend.available)
    func theSameTokenOnAnotherPlatformIsAnotherDevice(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let one = try await Fixture.make(db.store)
            let two = try await Fixture.make(db.store)
            let token = randomAPNsToken()
            let a = try await db.store.devices.register(on: one.platform, try registration(token))
            let b = try await db.store.devices.register(on: two.platform, try registration(token))
            #expect(a.uuid != b.uuid)
            #expect(try await db.store.devices.find(platformID: two.platform.id, uuid: a.uuid) == nil)
            #expect(try await !db.store.devices.delete(platformID: two.platform.id, uuid: a.uuid))
            #expect(
                try await db.store.devices.update(
                    on: two.platform, uuid: a.uuid, RegistrationInput(deviceAlias: .set("x")).validated(for: .ios, requireToken: false))
                    == nil)
            #expect(try await db.store.devices.find(platformID: one.platform.id, uuid: a.uuid)?.deviceAlias == nil)
        }
    }

    @Test(arguments: Backend.available)
    func updateKeepsAbsentFieldsAndAppliesTagDeltas(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let device = try await db.store.devices.register(
                on: fixture.platform, try registration(randomAPNsToken(), tags: ["a", "b"], customUserID: "User-1", alias: "phone"))
            let delta = try RegistrationInput(osVersion: .set("18.1"), tags: .delta(subscribe: ["C", "a"], unsubscribe: ["b"]))
                .validated(for: .ios, requireToken: false)
            let updated = try #require(try await db.store.devices.update(on: fixture.platform, uuid: device.uuid, delta))
            #expect(updated.tags == ["a", "c"])
            #expect(updated.customUserID == "User-1")
            #expect(updated.deviceAlias == "phone")
            #expect(updated.osVersion == "18.1")
            let clear = try RegistrationInput(customUserID: .clear).validated(for: .ios, requireToken: false)
            let cleared = try #require(try await db.store.devices.update(on: fixture.platform, uuid: device.uuid, clear))
            #expect(cleared.customUserID == nil)
            #expect(cleared.tags == ["a", "c"])
        }
    }

    @Test(arguments: Backend.available)
    func updateRefusesTagDeltasBeyondTheLimitAndChangesNothing(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let device = try await db.store.devices.register(
                on: fixture.platform, try registration(randomAPNsToken(), tags: (0..<1000).map { "old\($0)" }))
            let delta = try RegistrationInput(
                deviceAlias: .set("changed"), tags: .delta(subscribe: (0..<100).map { "new\($0)" }, unsubscribe: [])
            )
            .validated(for: .ios, requireToken: false)
            let error = await #expect(throws: ValidationError.self) {
                try await db.store.devices.update(on: fixture.platform, uuid: device.uuid, delta)
            }
            #expect(error?.field == "tags.subscribe")
            let unchanged = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: device.uuid))
            #expect(unchanged.tags.count == 1000)
            #expect(unchanged.deviceAlias == nil)
        }
    }

    @Test(arguments: Backend.available)
    func updateWithAnUnknownUUIDAndATokenRegisters(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let token = randomAPNsToken()
            let put = try RegistrationInput(registrationToken: token, tags: .delta(subscribe: ["x"], unsubscribe: []))
                .validated(for: .ios, requireToken: false)
            let created = try #require(try await db.store.devices.update(on: fixture.platform, uuid: UUID(), put))
            #expect(created.registrationToken == token)
            #expect(created.tags == ["x"])
            let noToken = try RegistrationInput(deviceAlias: .set("a")).validated(for: .ios, requireToken: false)
            #expect(try await db.store.devices.update(on: fixture.platform, uuid: UUID(), noToken) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func movingATokenToAnotherDeviceLeavesOneDevicePerToken(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let tokenA = randomAPNsToken()
            let a = try await db.store.devices.register(on: fixture.platform, try registration(tokenA))
            let b = try await db.store.devices.register(on: fixture.platform, try registration(randomAPNsToken()))
            let move = try RegistrationInput(registrationToken: tokenA).validated(for: .ios, requireToken: false)
            let moved = try #require(try await db.store.devices.update(on: fixture.platform, uuid: b.uuid, move))
            #expect(moved.registrationToken == tokenA)
            #expect(try await db.store.devices.find(platformID: fixture.platform.id, uuid: a.uuid) == nil)
            #expect(try await db.store.devices.count(platformID: fixture.platform.id) == 1)
        }
    }

    @Test(arguments: Backend.available)
    func searchFiltersPagesAndCounts(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let web = try await db.store.platforms.create(
                applicationID: fixture.app.id, name: "web", type: .web, credentials: try Fixture.credentials(for: .web)
            ).0
            for index in 0..<25 {
                _ = try await db.store.devices.register(
                    on: fixture.platform,
                    try registration(
                        randomAPNsToken(), tags: index % 5 == 0 ? ["Sports"] : ["news"], customUserID: "user_\(index)",
                        alias: index == 7 ? "50% Phone" : index == 8 ? "ear12" : nil))
            }
            let other = try await Fixture.make(db.store)
            _ = try await db.store.devices.register(on: other.platform, try registration(randomAPNsToken(), tags: ["sports"]))

            let all = try await db.store.devices.search(applicationID: fixture.app.id, filter: DeviceFilter(), page: 1, size: 10)
            #expect(all.total == 25)
            #expect(all.devices.count == 10)
            let last = try await db.store.devices.search(applicationID: fixture.app.id, filter: DeviceFilter(), page: 3, size: 10)
            #expect(last.devices.count == 5)
            #expect(Set(all.devices.map(\.id)).isDisjoint(with: last.devices.map(\.id)))
            let sports = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(topic: "SPORTS"), page: 1, size: 50)
            #expect(sports.total == 5)
            #expect(sports.devices.allSatisfy { $0.tags == ["sports"] })
            let user = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(query: "USER_1"), page: 1, size: 50)
            #expect(user.total == 11)
            let percent = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(query: "50%"), page: 1, size: 50)
            #expect(percent.total == 1)
            let underscore = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(query: "r_2"), page: 1, size: 50)
            // user_2 and user_20…24, but not "ear12", which an unescaped "_" would match.
            #expect(underscore.total == 6)
            let webOnly = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(platformType: .web), page: 1, size: 50)
            #expect(webOnly.total == 0)
            let byPlatform = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(platformID: web.id), page: 1, size: 50)
            #expect(byPlatform.total == 0)
            let countOnly = try await db.store.devices.search(applicationID: fixture.app.id, filter: DeviceFilter(), page: 1, size: 0)
            #expect(countOnly.total == 25 && countOnly.devices.isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func concurrentRegistrationsOfOneTokenMakeOneDevice(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let token = randomAPNsToken()
            let input = try registration(token, tags: ["a"])
            let uuids = try await withThrowingTaskGroup(of: UUID.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await db.store.devices.register(on: fixture.platform, input).uuid }
                }
                return try await group.reduce(into: Set<UUID>()) { $0.insert($1) }
            }
            #expect(uuids.count == 1)
            #expect(try await db.store.devices.count(platformID: fixture.platform.id) == 1)
        }
    }
    /// A registration's answer is built from the request and the row's id, uuid and created_at
    /// (`RegistrationBatcher.Request.answer`), not read back from the row: each answer must be
    /// the device as stored, for new devices and re-registered ones (which keep their uuid and
    /// created_at and take every other field from the new registration), the same token on two
    /// platforms in one batch, and a batch that takes the transactional path (a tag of an expired
    /// topic; PostgreSQL's one statement otherwise).
    @Test(arguments: Backend.available, [false, true])
    func aBatchAnswersEachRegistrationWithTheDeviceAsStored(_ backend: Backend, expiredTopic: Bool) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let one = try await Fixture.make(db.store)
            let two = try await Fixture.make(db.store)
            if expiredTopic {
                _ = try await db.store.topics.create(applicationID: one.app.id, [TopicRequest(name: "gone", expiresAt: clock.now + 1)])
            }
            let shared = randomAPNsToken()
            let known = (0..<4).map { _ in randomAPNsToken() }
            var earlier: [String: Device] = [:]
            for token in known {
                earlier[token] = try await db.store.devices.register(
                    on: one.platform,
                    try RegistrationInput(
                        os: "ios", osVersion: .set("16.0"), deviceAlias: .set("old"), deviceModel: .set("iPhone 12"),
                        deviceManufacturer: .set("Apple"), registrationToken: token, customUserID: .set("user-old"),
                        tags: .replace(["a", "b"])
                    ).validated(for: .ios, requireToken: true))
            }
            let sharedOnTwo = try await db.store.devices.register(on: two.platform, try registration(shared, tags: ["x"]))
            clock.advance(5_000)

            // New tokens, the earlier ones again with other fields (some cleared), and the token
            // known on platform two registered on platform one: all at once, so that they batch.
            var inputs: [(Platform, Registration)] = []
            for (index, token) in (known + (0..<8).map { _ in randomAPNsToken() }).enumerated() {
                inputs.append(
                    (
                        one.platform,
                        try RegistrationInput(
                            os: "ios", osVersion: .set("17.\(index)"),
                            deviceModel: index.isMultiple(of: 2) ? .set("iPhone 15") : .unchanged,
                            registrationToken: token.uppercased(), customUserID: index.isMultiple(of: 3) ? .set("user-\(index)") : .clear,
                            tags: .replace(expiredTopic && index == 0 ? ["gone", "C"] : ["c", "B"])
                        ).validated(for: .ios, requireToken: true)
                    ))
            }
            inputs.append((one.platform, try registration(shared, tags: ["y"], alias: "shared")))
            let answers = try await withThrowingTaskGroup(of: Device.self) { group in
                for (platform, input) in inputs {
                    group.addTask { try await db.store.devices.register(on: platform, input) }
                }
                return try await group.reduce(into: [Device]()) { $0.append($1) }
            }

            #expect(answers.count == inputs.count)
            for answer in answers {
                let stored = try #require(try await db.store.devices.find(platformID: answer.platformID, uuid: answer.uuid))
                #expect(answer == stored)
                #expect(answer.updatedAt == clock.now)
                if let before = earlier[answer.registrationToken] {
                    #expect(answer.id == before.id && answer.uuid == before.uuid && answer.createdAt == before.createdAt)
                    #expect(answer.createdAt < answer.updatedAt && answer.deviceAlias == nil)
                } else {
                    #expect(answer.createdAt == answer.updatedAt)
                }
            }
            #expect(try await db.store.devices.find(platformID: two.platform.id, uuid: sharedOnTwo.uuid) == sharedOnTwo)
            #expect(try await db.store.devices.count(platformID: one.platform.id) == inputs.count)
        }
    }
}
