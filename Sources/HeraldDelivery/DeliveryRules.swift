import HeraldCore

/// The numbers a batch is planned and its answers folded by (from `DeliveryConfiguration`).
struct DeliveryRules: Sendable, Equatable {
    /// Tries of one device before its failure is final, when the provider answered.
    var maximumAttempts = 5
    /// The wait before a device's first retry; each further one doubles, up to 5 minutes.
    var firstRetryDelay: Duration = .seconds(1)
    /// How long after a push was accepted an unreachable provider is still tried.
    var unreachableRetryWindow: Duration = .seconds(86_400)
    /// How long a paused platform's devices wait: its credentials may be fixed meanwhile.
    var pausedDelay: Duration = .seconds(60)
    /// Devices sent between two records of a batch's progress: a worker that dies resends at
    /// most this many (plus a probe).
    var progressEvery = 1000
    /// The first round to a platform not yet seen to accept: a refusal of its credentials costs
    /// this many requests, not the whole batch.
    var probe = 50
    /// A request that failed below HTTP is sent again at once this many times.
    var immediateResends = 2

    init() {}

    init(_ configuration: DeliveryConfiguration) {
        maximumAttempts = configuration.maximumAttempts
        firstRetryDelay = configuration.firstRetryDelay
        unreachableRetryWindow = configuration.unreachableRetryWindow
        progressEvery = configuration.progressEvery
    }
}
