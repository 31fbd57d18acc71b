import HeraldCore

/// How the delivery workers run.
package struct DeliveryConfiguration: Sendable {
    /// Jobs worked on at once in this process.
    package var workers: Int = 4
    /// Devices per batch job. Each batch costs the store a dozen statements whatever its size, so
    /// larger batches cost PostgreSQL and Herald less CPU a notification, for some more peak RSS
    /// during a broadcast (docs/benchmarks-history.md, issue 18). A crash resends at most one
    /// round of a batch (`progressEvery`), not the whole batch.
    package var batchSize: Int = 4000
    /// Devices of a batch sent between two records of its progress (the outcomes so far, and the
    /// job kept with only the devices not yet sent): a worker killed mid-batch resends at most
    /// this many, so a crash resends at most `workers` × this. Each record costs the store one
    /// transaction (3–5 statements).
    package var progressEvery: Int = 1000
    /// Requests in flight at once within one batch for WNS, which takes one HTTP/1.1 request per
    /// notification; APNs, FCM and Web Push take a batch on their HTTP/2 connections at once.
    package var sendConcurrency: Int = 100
    /// How long a claimed job is reserved for its worker. The worker renews it every third of it
    /// while it works; a crashed worker's job is taken again once it runs out.
    package var lease: Duration = .seconds(30)
    /// The longest an idle worker sleeps before it looks at the queue again (the safety poll).
    /// An idle worker sleeps until the queue's next due job (a retry, a throttled batch, a
    /// delayed geofence update, an expired lease) and is woken at once by work announced in this
    /// process or, on PostgreSQL, by another (`Store.work`); this bounds only how late it finds
    /// work nobody announced. Nil: `IdleWait.defaultSafetyPoll(for:)` of the backend (5 s on
    /// PostgreSQL, 10 minutes on SQLite).
    package var idlePoll: Duration?
    /// Tries of one device before its failure is final, when the provider answered (an error,
    /// throttling, refused credentials).
    package var maximumAttempts: Int = 5
    /// The wait before a device's first retry; each further one doubles, up to 5 minutes.
    package var firstRetryDelay: Duration = .seconds(1)
    /// How long after a push was accepted a device whose provider could not be reached (no
    /// connection, no answer) is still tried, with backoff up to 5 minutes. An outage of the
    /// provider or the network loses nothing shorter than this; the push's own expiry, if
    /// sooner, ends it first.
    package var unreachableRetryWindow: Duration = .seconds(86_400)
    /// Replaces Apple's endpoints (a mock, a proxy).
    package var apnsEndpoint: String?
    /// Replaces Google's FCM endpoint (a mock, a proxy).
    package var fcmEndpoint: String?
    /// Sends every Web Push message to this origin instead of the subscription's (a mock).
    package var webPushEndpoint: String?
    /// Replaces Microsoft's WNS token endpoint (a mock).
    package var wnsTokenEndpoint: String?
    /// Sends every WNS notification to this origin instead of the channel URI's (a mock).
    package var wnsEndpoint: String?
    /// A channel host to send to besides `*.notify.windows.com` (a test WNS).
    package var wnsAllowedTestHost: String?
    /// A CA to trust besides the system's, PEM, for every provider.
    package var extraTrustedCAPEM: String?
    /// An HTTP CONNECT or SOCKS5 proxy for every provider (`HERALD_PROXY`).
    package var proxy: OutboundProxy?
    /// On a graceful shutdown, how long APNs requests on the wire may wait for their answers
    /// (none starts after it began); `herald serve --shutdown-grace`.
    package var shutdownGrace: Duration = .seconds(10)

    package init() {}
}
