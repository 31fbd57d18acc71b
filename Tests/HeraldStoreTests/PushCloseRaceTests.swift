import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A push is closed by whichever transaction closes its last open job. On PostgreSQL two of them
/// may run at once (the fan-out's last, empty page and the completion of the batch it wrote just
/// before); each must not decide on the other's uncommitted state, or the push stays `sending`
/// forever (seen in CI: every device delivered, `pending` 0, never `done`).
@Suite struct PushCloseRaceTests {
    @Test(.timeLimit(.minutes(2)))
    func theFanOutsLastPageAndItsBatchFinishingTogetherCloseThePush() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let fixture = try await Fixture.make(db.store)
            _ = try await db.store.devices.register(
                on: fixture.platform, try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true))
            let id = try await db.store.pushes.create(
                applicationID: fixture.app.id, try .accepting(#"{"message":{"body":"hi"},"target":{"platform":"ios"}}"#))
            let push = try PushInput(message: .init(body: "hi"), target: .init(platform: "ios")).validated(now: 0)

            // The fan-out writes its one page without knowing it was the last; a worker takes
            // the batch and delivers it.
            let fanout = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            let page = try await db.store.pushes.audience(of: push, applicationID: fixture.app.id, after: fanout.cursor, limit: 10)
            try await db.store.pushes.advance(fanout, page: page, finished: false)
            let batch = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(batch.kind == .batch)

            // The fan-out's closing transaction: it closes its job and looks for open ones (the
            // batch, still claimed) and then holds, uncommitted.
            let fanoutClose = await HeldTransaction.start(on: db.database) { connection in
                let moved = try await connection.query(PushRepository.move(fanout, to: "done", through: fanout.cursor))
                let closed = try await PushRepository.closeIfFinished(connection, pushID: id, time: 0)
                return (moved: moved.count, closed: closed)
            }

            // Meanwhile the batch completes. It must either wait for the fan-out's transaction
            // or see its job closed; it must not take the fan-out for open and close nothing.
            var result = BatchResult()
            result.delivered = 1
            let batchDone = Racer { [result] in try await db.store.pushes.complete(batch, result) }
            try await batchDone.waitUntilBlockedOrFinished(in: db)
            let fanoutOutcome = try await fanoutClose.commit()
            #expect(fanoutOutcome.moved == 1)
            #expect(fanoutOutcome.closed == false, "the batch is still open when the fan-out looks")
            try await batchDone.value

            let stored = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
            #expect(stored.delivered == 1)
            #expect(stored.status == "done")
        }
    }
}
