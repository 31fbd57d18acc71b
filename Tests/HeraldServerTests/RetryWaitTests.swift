import Foundation
import HeraldCore
import HeraldDelivery
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

/// Issue 31, defect 1: a provider's wait (`X-WNS-CONTINUE-AFTER`) runs from when its refusal
/// arrived, not from when the batch started. Through the engine to the mock WNS over TLS.
@Suite struct RetryWaitTests {
    /// A clock that runs with the system's, and that a test moves ahead at a moment of its
    /// choosing: here, a batch whose second answer comes 10 s after it started.
    final class JumpingClock: Sendable {
        private let offset = Mutex<Duration>(.zero)

        var epochClock: EpochClock {
            EpochClock { [self] in EpochClock.system.now.sinceEpoch + offset.withLock { $0 } }
        }

        func jump(by duration: Duration) {
            offset.withLock { $0 += duration }
        }
    }

    /// Two devices sent one at a time; the first is accepted, and then the batch's clock moves
    /// 10 s ahead (a slow batch) and the second is throttled with `X-WNS-CONTINUE-AFTER: 3`.
    /// The second is sent again no sooner than 3 s after its refusal. Before, the wait was added
    /// to the batch's start, already 10 s past: the resend went out at once.
    @Test(arguments: Backend.available)
    func aThrottledDeviceIsResentNoSoonerThanTheWaitAfterItsRefusal(_ backend: Backend) async throws {
        let tls = try MockTLS()
        let clock = JumpingClock()
        var behavior = MockWNSServer.Behavior()
        behavior.clients = ["ms-app://s-1-15-2-1": "secret"]
        behavior.continueAfter = "3"
        behavior.clock = clock.epochClock
        let wns = MockWNSServer(tls: tls, behavior: behavior)
        _ = try await wns.start()
        do {
            try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
                let fixture = try await Fixture.make(db.store, type: .windows)
                let first = try await db.store.devices.register(
                    on: fixture.platform,
                    try RegistrationInput(registrationToken: wns.channelURI(token: "first")).validated(for: .windows, requireToken: true))
                let second = try await db.store.devices.register(
                    on: fixture.platform,
                    try RegistrationInput(registrationToken: wns.channelURI(token: "second")).validated(for: .windows, requireToken: true))
                #expect(first.id < second.id)
                // The instant the clock jumped (before the refusal), and the second device's arrivals.
                let jumped = Mutex<EpochClock.Instant?>(nil)
                let arrivals = Mutex<[EpochClock.Instant]>([])
                wns.update {
                    $0.onReceive = { received in
                        if received.channel.contains("first") {
                            clock.jump(by: .seconds(10))
                            jumped.withLock { $0 = clock.epochClock.now }
                            wns.update { $0.throttled = 1 }
                        } else {
                            arrivals.withLock { $0.append(clock.epochClock.now) }
                        }
                    }
                }
                var configuration = DeliveryConfiguration()
                configuration.wnsTokenEndpoint = wns.tokenEndpoint
                configuration.wnsAllowedTestHost = "127.0.0.1"
                configuration.extraTrustedCAPEM = tls.caCertificatePEM
                configuration.idlePoll = .milliseconds(10)
                configuration.workers = 1
                configuration.sendConcurrency = 1
                configuration.firstRetryDelay = .milliseconds(10)
                let workers = Task {
                    try await DeliveryService(
                        store: db.store, configuration: configuration, clock: clock.epochClock, logger: TestDatabase.logger
                    )
                    .run()
                }
                defer { workers.cancel() }
                let id = try await db.store.pushes.create(
                    applicationID: fixture.app.id, try .accepting(#"{"message":{"body":"x"},"target":{"platform":"windows"}}"#))
                try await DeliveryWorld.poll("the push is delivered", within: .seconds(30)) {
                    try await db.store.pushes.find(id: id, applicationID: fixture.app.id)?.status == "done"
                }
                let push = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
                #expect(push.delivered == 2)
                let refusedAfter = try #require(jumped.withLock { $0 })
                let resent = try #require(arrivals.withLock { $0 }.first)
                #expect(refusedAfter.duration(to: resent) >= .seconds(3), "resent \(refusedAfter.duration(to: resent)) after the refusal")
            }
        } catch {
            await wns.shutdown()
            throw error
        }
        await wns.shutdown()
    }
}
