import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v1/analytics` (devices, platform credentials): the PCF SDKs' batched events;
/// `GET /v1/analytics/summary` (backends, app credentials): the application's time series.
struct AnalyticsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let clock: EpochClock

    /// The most buckets one summary answers.
    static var maximumBuckets: Int { 2000 }

    func addRoutes(to router: Router<Context>) {
        router.post("v1/analytics", use: record)
        router.get("v1/analytics/summary", use: summary)
    }

    struct Recorded: ResponseEncodable {
        var events: Int
    }

    /// Stores a batch, all or nothing: one bad event refuses the batch, naming it (`events[3].eventTime`).
    @Sendable func record(_ request: Request, context: Context) async throws -> Recorded {
        var request = request
        let platform = try await auth.platform(request)
        let events = try await request.decodeJSON(AnalyticsBatchInput.self).validated()
        try await store.analytics.record(events, applicationID: platform.applicationID, platformID: platform.id)
        return Recorded(events: events.count)
    }

    struct Summary: ResponseEncodable {
        var interval: String
        var from: Int64
        var to: Int64
        var buckets: [Bucket]
    }

    struct Bucket: Encodable {
        var start: Int64
        var received: Int
        var opened: Int
        var geofenceTriggered: Int
        var heartbeats: Int
        /// Every event type, the SDKs' and any other.
        var events: [String: Int]

        enum CodingKeys: String, CodingKey {
            case start, received, opened, heartbeats, events
            case geofenceTriggered = "geofence_triggered"
        }

        init(_ bucket: AnalyticsBucket) {
            start = bucket.start
            received = bucket.counts[AnalyticsEventType.received] ?? 0
            opened = bucket.counts[AnalyticsEventType.opened] ?? 0
            geofenceTriggered = bucket.counts[AnalyticsEventType.geofenceTriggered] ?? 0
            heartbeats = bucket.counts[AnalyticsEventType.heartbeat] ?? 0
            events = bucket.counts
        }
    }

    /// `from` and `to` are epoch milliseconds (`to` excluded; by default now, and a day or 30
    /// days before it); `interval` is `hour` (default) or `day`, in UTC.
    @Sendable func summary(_ request: Request, context: Context) async throws -> Summary {
        let app = try await auth.application(request)
        let parameters = request.uri.queryParameters
        var interval = AnalyticsInterval.hour
        if let raw = parameters.get("interval"), !raw.isEmpty {
            guard let parsed = AnalyticsInterval(rawValue: raw.lowercased()) else {
                throw APIError.badRequest("interval must be hour or day", field: "interval")
            }
            interval = parsed
        }
        func time(_ name: String) throws -> Int64? {
            guard let raw = parameters.get(name), !raw.isEmpty else { return nil }
            // Up to the year 3000: far enough, and no arithmetic on it can overflow.
            guard let value = Int64(raw), (0...32_503_680_000_000).contains(value) else {
                throw APIError.badRequest("\(name) is epoch milliseconds, a whole number from 0 to 32503680000000", field: name)
            }
            return value
        }
        let to = try time("to") ?? clock.now.epochMilliseconds
        var from = try time("from") ?? max(0, to - (interval == .hour ? 86_400_000 : 30 * 86_400_000))
        // An empty or reversed range has no buckets.
        guard from < to else {
            return Summary(interval: interval.rawValue, from: from, to: to, buckets: [])
        }
        // At most `maximumBuckets`, the last ones: a `from` earlier than that moves forward, and
        // the answer's `from` says where the series starts.
        let buckets = (to - interval.bucketStart(from) + interval.milliseconds - 1) / interval.milliseconds
        if buckets > Self.maximumBuckets {
            from = interval.bucketStart(to - 1) - Int64(Self.maximumBuckets - 1) * interval.milliseconds
        }
        let series = try await store.analytics.summary(applicationID: app.id, from: from, to: to, interval: interval)
        return Summary(interval: interval.rawValue, from: from, to: to, buckets: series.map(Bucket.init))
    }
}
