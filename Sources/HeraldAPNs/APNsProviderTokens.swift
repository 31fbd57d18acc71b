import HeraldCore
import Synchronization

/// One platform's APNs provider tokens: shared by every batch this process sends for the
/// platform and, through `store`, by every process sending for it; the refusals APNs gives them
/// judged by `APNsTokenStateMachine`.
///
/// The token in use is cached here: a batch takes it under a `Mutex` without awaiting anything.
/// Only when the machine asks for a new one (due after 50 minutes, or refused) does one batch go
/// to the store, while the others that need a token meanwhile wait for the same answer; the
/// store, under its lock, hands back the token another process signed since, or signs one.
package final class APNsProviderTokens: Sendable {
    private struct State {
        var machine = APNsTokenStateMachine()
        /// The trip to the store under way, which every batch needing a new token awaits.
        var renewal: Task<APNsSharedProviderToken, any Error>?
    }

    private let generator: APNsTokenGenerator
    private let store: any APNsProviderTokenStore
    private let clock: EpochClock
    private let state = Mutex(State())

    /// - Parameter store: where the platform's processes share the token; by default this
    ///   process's memory only.
    package init(
        generator: APNsTokenGenerator, store: any APNsProviderTokenStore = APNsLocalProviderTokenStore(), clock: EpochClock = .system
    ) {
        self.generator = generator
        self.store = store
        self.clock = clock
    }

    private enum Step {
        case ready(APNsTokenStateMachine.Lease)
        case renewing(Task<APNsSharedProviderToken, any Error>)
        case failing
    }

    /// The token for a request sent now; nil when the credentials are failing.
    ///
    /// Throws `APNsProviderTokenError`: the key could not sign, or the store could not be read.
    package func lease() async throws(APNsProviderTokenError) -> APNsTokenStateMachine.Lease? {
        let now = clock.now.epochSeconds
        let step = state.withLock { state -> Step in
            switch state.machine.nextToken(now: now) {
            case .use(let token):
                return .ready(state.machine.lease(token))
            case .sign(let issuedAt):
                if let renewal = state.renewal { return .renewing(renewal) }
                // Unstructured, so that a batch cancelled meanwhile does not fail the others'.
                let replacing = state.machine.token
                let renewal = Task { try await self.renew(replacing: replacing, issuedAt: issuedAt) }
                state.renewal = renewal
                return .renewing(renewal)
            case .fail:
                return .failing
            }
        }
        switch step {
        case .ready(let lease):
            return lease
        case .failing:
            return nil
        case .renewing(let renewal):
            let shared: APNsSharedProviderToken
            do {
                shared = try await renewal.value
            } catch let error as APNsProviderTokenError {
                throw error
            } catch {
                throw APNsProviderTokenError.storeFailed(error)
            }
            return state.withLock { $0.machine.lease(shared.token) }
        }
    }

    /// Asks the store for the token that replaces `replacing`: the one stored, if another process
    /// put a usable one there, else one signed now (at `issuedAt`). Records it in the machine.
    private func renew(replacing: String?, issuedAt: Int64) async throws -> APNsSharedProviderToken {
        let generator = self.generator
        do {
            let shared = try await store.renew { stored in
                if let stored, stored.keyFingerprint == generator.fingerprint,
                    APNsTokenStateMachine.reuses(stored, replacing: replacing, now: issuedAt)
                {
                    return stored
                }
                do {
                    return APNsSharedProviderToken(
                        token: try generator.token(issuedAt: issuedAt), issuedAt: issuedAt, keyFingerprint: generator.fingerprint)
                } catch {
                    throw APNsProviderTokenError.signingFailed(error)
                }
            }
            state.withLock { state in
                state.machine.signed(shared.token, issuedAt: shared.issuedAt)
                state.renewal = nil
            }
            return shared
        } catch {
            state.withLock { $0.renewal = nil }
            throw error
        }
    }

    /// APNs refused the token of requests sent under `lease`.
    package func rejected(_ lease: APNsTokenStateMachine.Lease) -> APNsTokenStateMachine.RejectionAction {
        let now = clock.now.epochSeconds
        return state.withLock { $0.machine.rejected(lease, now: now) }
    }

    /// APNs accepted a request sent under `lease`.
    package func accepted(_ lease: APNsTokenStateMachine.Lease) {
        state.withLock { $0.machine.accepted(lease) }
    }
}
