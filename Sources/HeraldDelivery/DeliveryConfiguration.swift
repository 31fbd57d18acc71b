/// How the delivery workers run.
public struct DeliveryConfiguration: Sendable {
    /// Jobs worked on at once in this process.
    public var workers: Int = 4
    /// Devices per batch job.
    public var batchSize: Int = 500
    /// Notifications in flight at once within one batch.
    public var sendConcurrency: Int = 100
    /// How long a claimed job is reserved for its worker (ms). The worker renews it every third
    /// of it while it works; a crashed worker's job is taken again once it runs out.
    public var lease: Int64 = 30_000
    /// Pause between looks at an empty queue.
    public var idlePoll: Duration = .milliseconds(50)
    /// Tries of one device before its failure is final.
    public var maximumAttempts: Int = 5
    /// Replaces Apple's endpoints (a mock, a proxy).
    public var apnsEndpoint: String?
    /// A CA to trust besides the system's, PEM.
    public var extraTrustedCAPEM: String?

    public init() {}
}
