import HeraldCore
import Synchronization

/// One platform's APNs provider tokens: signed when due, shared by every batch sent for the
/// platform, and the refusals APNs gives them judged by `APNsTokenStateMachine`.
///
/// A class around a `Mutex`: batches for the platform run concurrently, and the one signature
/// every 50 minutes (about 50 µs) is made under the lock so that two batches never sign twice.
public final class APNsProviderTokens: Sendable {
    private let generator: APNsTokenGenerator
    private let clock: EpochClock
    private let machine = Mutex(APNsTokenStateMachine())

    public init(generator: APNsTokenGenerator, clock: EpochClock = .system) {
        self.generator = generator
        self.clock = clock
    }

    /// The token for a request sent now; nil when the credentials are failing.
    public func lease() throws -> APNsTokenStateMachine.Lease? {
        let now = clock.now.epochSeconds
        return try machine.withLock { machine in
            switch machine.nextToken(now: now) {
            case .use(let token):
                return machine.lease(token)
            case .sign(let issuedAt):
                let token = try generator.token(issuedAt: issuedAt)
                machine.signed(token, issuedAt: issuedAt)
                return machine.lease(token)
            case .fail:
                return nil
            }
        }
    }

    /// APNs refused the token of requests sent under `lease`.
    public func rejected(_ lease: APNsTokenStateMachine.Lease) -> APNsTokenStateMachine.RejectionAction {
        let now = clock.now.epochSeconds
        return machine.withLock { $0.rejected(lease, now: now) }
    }

    /// APNs accepted a request sent under `lease`.
    public func accepted(_ lease: APNsTokenStateMachine.Lease) {
        machine.withLock { $0.accepted(lease) }
    }
}
