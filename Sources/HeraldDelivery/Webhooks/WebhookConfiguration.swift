import HeraldCore

/// How the webhook workers deliver apps' events (docs/WEBHOOKS.md).
public struct WebhookConfiguration: Sendable {
    /// Deliveries in flight at once in this process; 0: this process sends none.
    public var workers: Int = 2
    /// Which addresses deliveries may connect to (`--webhook-allow-private` allows non-public
    /// ones, and with them `http://` URLs).
    public var addressPolicy = WebhookAddressPolicy()
    /// The longest a connection may take to open (TCP and TLS).
    public var connectTimeout: Duration = .seconds(5)
    /// The longest a whole attempt may take: resolving, connecting, sending and reading the answer.
    public var requestTimeout: Duration = .seconds(15)
    /// How long a claimed delivery is reserved for its worker. Longer than `requestTimeout`, so
    /// that an attempt never outlives its lease and needs no renewal; a crashed worker's delivery
    /// is taken again once it runs out.
    public var lease: Duration = .seconds(60)
    /// The wait before the first retry; each further one doubles (with jitter), up to `maximumRetryDelay`.
    public var firstRetryDelay: Duration = .seconds(10)
    public var maximumRetryDelay: Duration = .seconds(3600)
    /// How long after its event a delivery is still tried; then it is recorded as failed.
    public var retryWindow: Duration = .seconds(86_400)
    /// Pause between looks at an empty queue: an event queued in this process wakes the workers
    /// at once; this bounds how late they find retries coming due and other processes' events.
    public var idlePoll: Duration = .seconds(1)
    /// A CA to trust besides the system's, PEM (`HERALD_EXTRA_CA_FILE`, as for the providers).
    public var extraTrustedCAPEM: String?
    /// How much of a receiver's answer is kept for the admin API.
    public var excerptBytes: Int = 256

    public init() {}
}
