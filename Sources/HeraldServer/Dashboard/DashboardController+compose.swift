import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONSerialization
import struct Foundation.TimeZone
import struct Foundation.UUID

/// The push composer (Pivotal's "Create Push Notification"): a push's message, targets, schedule,
/// expiry and per-platform custom payloads; "Validate only" shows what each provider would get
/// (the delivery renderers' own output) without sending; "Send" goes through `POST /v1/push`'s
/// acceptance. "Preview audience" counts the devices the target fields and the audience
/// expression reach now, with the store's count that `validate_only` answers (`audience_count`).
extension DashboardController {
    static var composerPlatforms: [String] { ["ios", "android", "web", "windows"] }

    @Sendable func composePage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            var form = ["schedule": "now"]
            var notice: String?
            if let raw = request.uri.queryParameters.get("device"), let device = UUID(text: raw) {
                // "Test push" on a device: the whole composer, for that one device (as Pivotal's).
                form["devices"] = device.lowercasedString
                notice = "A test push to the device \(device.lowercasedString): write the message, add what you like, and send."
            }
            return try await composer(signed, app, form: form, errors: [:], previews: nil, notice: notice)
        }
    }

    @Sendable func compose(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                if form["action"] == "audience" { return try await previewAudience(signed, app, form) }
                if let place = form["target_location"], !place.isEmpty { return try await composeGeofence(signed, app, form, place: place) }
                let body = try Self.pushBody(form, validateOnly: form["action"] == "validate", now: clock.now.epochMilliseconds)
                // Read exactly as `POST /v1/push` reads its body: a member of the wrong type is
                // refused naming it (`schedule.count`), as the API refuses it.
                let input = try Request.decodeJSONDocument(PushInput.self, from: Data(body.utf8))
                switch try await pushes.accept(input, body: body, for: app) {
                case .validated(let validated):
                    let time = clock.now.epochMilliseconds
                    let push = try input.validated(now: time)
                    let providers = Set(try await signed.scope.platforms(of: app).map(\.type))
                    return try await composer(
                        signed, app, form: form, errors: [:], previews: Self.previews(push, now: time, providers: providers),
                        audienceCount: validated.audienceCount,
                        unmatchedTopics: try await pushes.unmatchedTopics(push, applicationID: app.id))
                case .scheduled(let scheduled):
                    // A push for later is a schedule, not yet a push: its place on Schedules, saying so.
                    let id = scheduled.scheduleID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/schedules?scheduled=\(id)#schedule-\(id)")
                case .accepted(let accepted):
                    return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/pushes/\(accepted.receiptID)")
                }
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await composer(signed, app, form: form, errors: Self.composerErrors(error), previews: nil, status: error.status)
            }
        }
    }

    /// Counts the devices the form's target fields and audience expression reach now, through
    /// the same acceptance as `POST /v1/push` with `validate_only` (the store's `audience_count`);
    /// the message, schedule and payloads do not change who is reached, so they are left out
    /// (a stand-in message), and the page keeps everything typed.
    func previewAudience(_ signed: SignedIn, _ app: App, _ form: [String: String]) async throws -> Response {
        var target = form.filter { Self.targetFields.contains($0.key) || $0.key.hasPrefix("platform_") }
        target["message"] = "audience preview"
        let body = try Self.pushBody(target, validateOnly: true, now: clock.now.epochMilliseconds)
        let input = try Request.decodeJSONDocument(PushInput.self, from: Data(body.utf8))
        guard case .validated(let validated) = try await pushes.accept(input, body: body, for: app) else {
            throw APIError.badRequest("the audience could not be counted", field: "target.audience")
        }
        return try await composer(signed, app, form: form, errors: [:], previews: nil, audienceCount: validated.audienceCount)
    }

    /// The composer's fields that say who a push reaches (besides the `platform_*` boxes).
    static var targetFields: Set<String> { ["topics", "custom_user_ids", "devices", "interactive_only", "audience"] }

    /// The warning for topics no device has, as the API's `unmatched_topics` gives them.
    static func unmatchedTopicsText(_ topics: [String]) -> String {
        let names = topics.map { "“\($0)”" }.joined(separator: ", ")
        return (topics.count == 1 ? "No device is subscribed to the topic \(names)" : "No device is subscribed to the topics \(names)")
            + " (unmatched_topics): nothing is sent through \(topics.count == 1 ? "it" : "them"). Check the spelling on the Topics page."
    }

    // MARK: Pages

    /// `audienceCount`: the devices the push would reach now, shown beside the audience field.
    func composer(
        _ signed: SignedIn, _ app: App, form: [String: String], errors: [String: String], previews: [[String: String]]?,
        audienceCount: Int? = nil, unmatchedTopics: [String]? = nil, notice: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let target = form["target_location"] ?? ""
        let locations = try await allLocations(app)
        let groups = try await locationGroups.list(applicationID: app.id, query: try Self.allPlaces()).places
        let defaultZone = try await signed.scope.deliverySettings(of: app).defaultTimeZone
        var view: [String: Any] = [
            "csrf": signed.session.csrf, "form": form, "errors": errors, "app": ["uuid": app.id.lowercasedString],
            "targetNone": target.isEmpty,
            "targetLocations": locations.map {
                ["value": "location:\($0.id)", "name": $0.name, "selected": target == "location:\($0.id)"] as [String: Any]
            },
            "targetGroups": groups.map {
                ["value": "group:\($0.id)", "name": $0.name, "selected": target == "group:\($0.id)"] as [String: Any]
            },
            "triggerExit": form["trigger_type"] == "exit", "hasTargetLocations": !locations.isEmpty, "hasTargetGroups": !groups.isEmpty,
            "platforms": Self.composerPlatforms.map { ["value": $0, "checked": form["platform_\($0)"] == "on"] as [String: Any] },
            "scheduleNow": (form["schedule"] ?? "now") == "now", "scheduleAt": form["schedule"] == "at",
            "scheduleIn": form["schedule"] == "in",
            "scheduleLocal": form["schedule"] == "local", "scheduleRepeat": form["schedule"] == "repeat",
            // Typed, or the app's default zone, which the API takes when none is given.
            "repeatTimeZone": form["repeat_time_zone"] ?? defaultZone, "defaultTimeZone": defaultZone, "timeZones": Self.timeZones,
            "repeatLocal": form["repeat_local"] == "on",
            "quietTimes": Self.quietTimeChoices.map { choice in
                [
                    "value": choice.policy.rawValue, "text": choice.text,
                    "selected": (form["quiet_time"] ?? "ignore") == choice.policy.rawValue,
                ]
                    as [String: Any]
            },
            "interactiveOnly": form["interactive_only"] == "on",
        ]
        if let previews {
            view["previews"] = previews
            view["hasPreviews"] = true
        }
        if let unmatchedTopics, !unmatchedTopics.isEmpty {
            view["unmatchedTopics"] = Self.unmatchedTopicsText(unmatchedTopics)
        }
        if let audienceCount {
            view["audienceCount"] = audienceCount
            view["audienceDevices"] = audienceCount == 1 ? "device" : "devices"
            view["hasAudienceCount"] = true
        }
        var layout = try await layout(signed, title: "Create push notification", app: app).merging(errorMessage(errors)) { $1 }
        if let notice { layout["notice"] = notice }
        return pages.page("compose", view, layout: layout, status: status)
    }

    /// The composer's quiet-time choices, each with its one-line meaning (docs/SCHEDULES.md).
    static var quietTimeChoices: [(policy: QuietTimePolicy, text: String)] {
        [
            (.ignore, "Ignore: every device gets it now, as usual"),
            (.hold, "Hold: a device in its quiet time gets it when its quiet time ends"),
            (.silent, "Silent: a device in its quiet time gets it now, without sound or banner"),
        ]
    }

    /// The zones a time-zone field suggests: those Foundation knows, which the API accepts.
    static var timeZones: [String] { TimeZone.knownTimeZoneIdentifiers.sorted() }

    // MARK: Helpers

    /// The `POST /v1/push` body the form describes.
    static func pushBody(_ form: [String: String], validateOnly: Bool, now: Int64) throws -> String {
        func list(_ name: String) -> [String]? {
            let items = commaList(form[name])
            return items.isEmpty ? nil : items
        }
        var message: [String: Any] = ["body": form["message"] ?? ""]
        var custom: [String: Any] = [:]
        for platform in composerPlatforms {
            guard let text = form["custom_\(platform)"], !text.trimmingASCIIWhitespace().isEmpty else { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)), object is [String: Any] else {
                throw APIError.badRequest("the \(platform) custom payload must be a JSON object", field: "message.custom.\(platform)")
            }
            custom[platform] = object
        }
        if let category = form["ios_category"]?.trimmingASCIIWhitespace(), !category.isEmpty {
            var ios = custom["ios"] as? [String: Any] ?? [:]
            ios["category"] = category
            custom["ios"] = ios
        }
        if !custom.isEmpty { message["custom"] = custom }
        var target: [String: Any] = [:]
        let platforms = composerPlatforms.filter { form["platform_\($0)"] == "on" }
        if !platforms.isEmpty { target["platforms"] = platforms }
        if let topics = list("topics") { target["topics"] = topics }
        if let users = list("custom_user_ids") { target["custom_user_ids"] = users }
        if let devices = list("devices") { target["devices"] = devices }
        if form["interactive_only"] == "on" { target["interactive-only"] = true }
        if let text = form["audience"], !text.trimmingASCIIWhitespace().isEmpty {
            // Only text that is not JSON at all is refused here; what it says is checked by the
            // API's own rules (`AudienceExpression.parse`), with the API's errors.
            guard let audience = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
                throw APIError.badRequest(
                    #"the audience must be JSON, such as {"and":[{"topic":"news"},{"not":{"topic":"sports"}}]}"#, field: "target.audience")
            }
            target["audience"] = audience
        }
        var push: [String: Any] = ["message": message, "target": target]
        switch form["schedule"] ?? "now" {
        case "at": push["scheduleAt"] = try time(form["schedule_at"] ?? "", field: "scheduleAt")
        case "in":
            guard let seconds = Int64((form["schedule_in"] ?? "").trimmingASCIIWhitespace()) else {
                throw APIError.badRequest("send in: a number of seconds", field: "scheduleIn")
            }
            push["scheduleIn"] = seconds
        case "local":
            // A wall-clock time without a zone: each device gets it at that time in its own zone
            // (`scheduleLocal`, checked by the API's own rule, which reads the field's HH:MM as it is).
            push["scheduleLocal"] = isoDateTime(form["schedule_local"] ?? "")
        case "repeat": push["schedule"] = try recurrence(form)
        default: break
        }
        if let expiry = form["expiry"], !expiry.isEmpty { push["expiryTime"] = try time(expiry, field: "expiryTime") }
        // What a device's quiet time means for the push; `ignore` (the default) is left out, and
        // anything else goes to the API's own check (`quiet_time`).
        if let policy = form["quiet_time"], !policy.isEmpty, policy != QuietTimePolicy.ignore.rawValue { push["quiet_time"] = policy }
        if validateOnly { push["validate_only"] = true }
        let data = try JSONSerialization.data(withJSONObject: push, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The form's "repeat" fields as `POST /v1/push`'s `schedule` (`local: true` when its times
    /// are each device's own): what was typed goes to the
    /// API's own checks (`PushInput.validatedRecurrence`), which name `schedule.cron`,
    /// `schedule.time_zone`, `schedule.until` and `schedule.count`. Only the until time is read
    /// here (a date and time in UTC, to epoch milliseconds); a count that is not a whole number
    /// is sent as typed, so that the API's reading refuses it naming `schedule.count`.
    static func recurrence(_ form: [String: String]) throws -> [String: Any] {
        func typed(_ name: String) -> String? {
            let text = (form[name] ?? "").trimmingASCIIWhitespace()
            return text.isEmpty ? nil : text
        }
        var schedule: [String: Any] = [:]
        if let cron = typed("repeat_cron") { schedule["cron"] = cron }
        // In each device's own zone (`schedule.local`), the zone field (filled with the app's
        // default) is left out: the API refuses the two together.
        if form["repeat_local"] == "on" {
            schedule["local"] = true
        } else if let zone = typed("repeat_time_zone") {
            schedule["time_zone"] = zone
        }
        if let until = typed("repeat_until") { schedule["until"] = try time(until, field: "schedule.until") }
        if let count = typed("repeat_count") { schedule["count"] = Int64(count).map { $0 as Any } ?? count }
        return schedule
    }

    /// A date-and-time field's value, `YYYY-MM-DD HH:MM[:SS]` (or with a `T`, as
    /// `datetime-local` and `scheduleLocal` write it), read as UTC, in epoch milliseconds.
    static func time(_ text: String, field: String) throws -> Int64 {
        guard let local = LocalDateTime(isoDateTime(text)) else {
            throw APIError.badRequest("a date and time in UTC is expected, as YYYY-MM-DD HH:MM", field: field)
        }
        return local.instant(in: .gmt)
    }

    /// A typed date and time in the form `LocalDateTime` reads: `2039-06-01 08:15` becomes
    /// `2039-06-01T08:15` (the fields show a space, which reads better and is as unambiguous).
    static func isoDateTime(_ text: String) -> String {
        let trimmed = text.trimmingASCIIWhitespace()
        let parts = trimmed.split(separator: " ", omittingEmptySubsequences: true)
        return parts.count == 2 ? "\(parts[0])T\(parts[1])" : trimmed
    }

    /// A comma-separated field's items (topics, custom user ids), trimmed, the empty ones left out.
    static func commaList(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
    }

    /// The composer's field for an API error's field.
    static func composerErrors(_ error: APIError) -> [String: String] {
        let field = error.field ?? "any"
        let key: String =
            if field == "message.custom.ios.category" { "ios_category" } else if field.hasPrefix("locations") || field == "target_location"
            { "target_location" } else if field.hasPrefix("message.custom.") {
                "custom_" + field.dropFirst("message.custom.".count).prefix { $0 != "." }
            } else if field.hasPrefix("message") { "message" } else if field.hasPrefix("target.topics") {
                "topics"
            } else if field.hasPrefix("target.audience") { "audience" } else if field.hasPrefix("target.custom_user_ids") {
                "custom_user_ids"
            } else if field.hasPrefix("target.devices") { "devices" } else if field.hasPrefix("target") {
                "platforms"
            } else if field == "scheduleAt" || field == "scheduleIn" || field == "scheduleLocal" || field == "schedule" {
                "schedule"
            } else if field == "schedule.cron" { "repeat_cron" } else if field == "schedule.time_zone" {
                "repeat_time_zone"
            } else if field == "schedule.until" { "repeat_until" } else if field == "schedule.count" {
                "repeat_count"
            } else if field == "quiet_time" { "quiet_time" } else if field == "expiryTime" || field == "expiry_time" {
                "expiry"
            } else if field == "trigger_type" { "trigger_type" } else if field.hasPrefix("tags") { "topics" } else if field == "platform" {
                "platforms"
            } else if field == "start_time" { "schedule" } else if field.hasPrefix("data") { "message" } else { "any" }
        // An audience fault names where in the expression it is (`target.audience.and[1].not.topic`).
        if key == "audience", field != "target.audience" { return [key: "\(field): \(error.message)"] }
        return [key: error.message]
    }

    /// What each provider would receive: the delivery renderers' output, for the providers of
    /// `providers` (the application's platforms' types; all when it has none yet).
    static func previews(_ push: Push, now: Int64, providers: Set<PlatformType> = []) throws -> [[String: String]] {
        let all = try allPreviews(push, now: now)
        let types: [PlatformType] = [.ios, .android, .web, .windows]
        guard !providers.isEmpty else { return all }
        return zip(types, all).filter { providers.contains($0.0) }.map(\.1)
    }

    /// Each provider's payload, in the order iOS, Android, Web, Windows.
    static func allPreviews(_ push: Push, now: Int64) throws -> [[String: String]] {
        func shown(_ name: String, _ text: String?) -> [String: String] {
            ["provider": name, "payload": text ?? "(this push sends nothing to this platform)"]
        }
        var rendered = try APNsRenderer.render(push, receiptID: APNsRenderer.receiptPlaceholder)?.payloadText
        var note: String?
        if let delta = push.badgeDelta, let payload = rendered {
            rendered = relativeBadge(payload, delta: delta)
            note =
                "The badge is each device's own count \(badgeChange(delta)) (Herald keeps it per device, never below 0), so each device gets its own number."
        }
        var apns = shown("APNs (iOS)", rendered)
        apns["note"] = note
        return [
            apns,
            shown("FCM (Android)", try FCMRenderer.render(push, receiptID: FCMRenderer.receiptPlaceholder, now: now)?.jsonText),
            shown("Web Push", try WebPushRenderer.render(push, receiptID: APNsRenderer.receiptPlaceholder, now: now)?.payloadText),
            shown(
                "WNS (Windows)",
                try WNSRenderer.render(push, receiptID: WNSRenderer.receiptPlaceholder, now: now).map {
                    String(decoding: $0.payload, as: UTF8.self)
                }),
        ]
    }

    /// An APNs payload with `aps.badge` written as the change (`"+1"`): the renderer checks a
    /// relative badge with the largest number, which is no device's number.
    static func relativeBadge(_ payload: String, delta: Int64) -> String {
        guard case .object(var root)? = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8)),
            case .object(var aps)? = root["aps"]
        else { return payload }
        aps["badge"] = .string(badgeChange(delta))
        root["aps"] = .object(aps)
        return JSONValue.object(root).jsonText
    }

    /// A relative badge as a request writes it: `+1`, `-2`.
    static func badgeChange(_ delta: Int64) -> String {
        delta < 0 ? "\(delta)" : "+\(delta)"
    }
}
