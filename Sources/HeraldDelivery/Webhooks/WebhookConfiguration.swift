import HeraldCore

/// How the webhook workers deliver apps' events (docs/WEBHOOKS.md).
package struct WebhookConfiguration: Sendable {
    /// Deliveries in flight at once in this process; 0: this process sends none.
    package var workers: Int = 2
    /// Which addresses deliveries may connect to (`--webhook-allow-private` allows non-public
    /// ones, and with them `http://` URLs).
    package var addressPolicy = WebhookAddressPolicy()
    /// The longest a connection may take to open (TCP and TLS).
    package var connectTimeout: Duration = .seconds(5)
    /// The longest a whole attempt may take: resolving, connecting, sending and reading the answer.
    package var requestTimeout: Duration = .seconds(15)
    /// How long a claimed delivery is reserved for its worker. Longer than `requestTimeout`, so
    /// that an attempt never outlives its lease and needs no renewal; a crashed worker's delivery
    /// is taken again once it runs out.
    package var lease: Duration = .seconds(60)
    /// The wait before the first retry; each further one doubles (with jitter), up to `maximumRetryDelay`.
    package var firstRetryDelay: Duration = .seconds(10)
    package var maximumRetryDelay: Duration = .seconds(3600)
    /// How long after its event a delivery is still tried; then it is recorded as failed.
    package var retryWindow: Duration = .seconds(86_400)
    /// The longest an idle worker sleeps (`IdleWait`'s safety poll; nil: the backend's default,
    /// as the delivery workers'). Workers sleep until the next delivery is due and wake when an
    /// event is queued, here or (PostgreSQL, `NOTIFY`) in another process; this bounds how late
    /// they find what nobody announced.
    package var idlePoll: Duration?
    /// A CA to trust besides the system's, PEM (`HERALD_EXTRA_CA_FILE`, as for the providers).
    package var extraTrustedCAPEM: String?
    /// How much of a receiver's answer is kept for the admin API.
    package var excerptBytes: Int = 256

    package init() {}
}
