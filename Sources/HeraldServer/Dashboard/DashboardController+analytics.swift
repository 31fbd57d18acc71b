import HeraldCore
import HeraldStore
import Hummingbird

import class Foundation.JSONEncoder
import struct Foundation.UUID

/// Analytics: received, opened and geofence-triggered events over time, as a chart (Chart.js
/// from Debian's `libjs-chart.js`, when installed) and a table; for the application, and for
/// one push on its page.
extension DashboardController {
    @Sendable func analyticsPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            var view = try await analytics(app, pushID: nil, request)
            view["app"] = ["uuid": app.id.lowercasedString]
            return pages.page("analytics", view, layout: chartLayout(try await layout(signed, title: "Analytics", app: app)))
        }
    }

    // MARK: Helpers

    /// The chart's and table's values: `interval=day` for 30 days by day, else 48 hours by hour;
    /// with `pushID`, only that push's events.
    func analytics(_ app: App, pushID: UUID?, _ request: Request) async throws -> [String: Any] {
        let interval: AnalyticsInterval = request.uri.queryParameters.get("interval") == "day" ? .day : .hour
        let to = interval.bucketStart(clock.now.epochMilliseconds) + interval.milliseconds
        let from = to - (interval == .day ? 30 : 48) * interval.milliseconds
        let buckets = try await store.analytics.summary(applicationID: app.id, pushID: pushID, from: from, to: to, interval: interval)
        let rows = buckets.map { bucket in
            AnalyticsRow(
                start: Self.time(bucket.start), received: bucket.counts[AnalyticsEventType.received] ?? 0,
                opened: bucket.counts[AnalyticsEventType.opened] ?? 0,
                geofence: bucket.counts[AnalyticsEventType.geofenceTriggered] ?? 0)
        }
        let series = (try? JSONEncoder().encode(rows)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        return [
            "hourly": interval == .hour, "series": series,
            "buckets": rows.map { ["start": $0.start, "received": $0.received, "opened": $0.opened, "geofence": $0.geofence] },
            "totals": [
                "received": rows.reduce(0) { $0 + $1.received }, "opened": rows.reduce(0) { $0 + $1.opened },
                "geofence": rows.reduce(0) { $0 + $1.geofence },
            ],
        ]
    }

    /// `layout` with Chart.js loaded, when it is served.
    func chartLayout(_ layout: [String: Any]) -> [String: Any] {
        var layout = layout
        if pages.files["vendor/chart.js"] != nil { layout["scripts"] = ["/dashboard/vendor/chart.js"] }
        return layout
    }
}

/// One bucket of the analytics page (and of its chart's data).
private struct AnalyticsRow: Encodable {
    var start: String
    var received: Int
    var opened: Int
    var geofence: Int
}
