import HeraldCore
import HeraldDelivery
import HeraldStore
import Hummingbird

import class Foundation.JSONDecoder
import class Foundation.JSONEncoder
import struct Foundation.UUID

/// Platforms: add (with credentials per type), edit, delete, a new secret, the credentials' status.
extension DashboardController {
    @Sendable func createPlatform(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                var input = PlatformInput()
                input.type = form["type"] ?? ""
                input.name = form["name"].flatMap { $0.trimmingASCIIWhitespace().isEmpty ? nil : $0 }
                input.credentials = try Self.credentials(form)
                let (platform, secret) = try await signed.scope.createPlatform(in: app, input)
                var identifiers = [("Platform uuid", platform.id.lowercasedString)]
                if let publicKey = platform.credentialsSummary?.fields["public_key"] { identifiers.append(("VAPID public key", publicKey)) }
                return try await secretPage(
                    signed, title: "Platform added", app: app,
                    explanation:
                        "The \(platform.type.rawValue) platform “\(platform.name)” exists. Devices register with its uuid and this secret.",
                    identifiers: identifiers, secretName: "Platform secret", secret: secret,
                    next: "/dashboard/platforms/\(platform.id.lowercasedString)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                // What was typed comes back, except the secrets (never written into a page).
                var kept = form.filter { $0.key.hasPrefix("credentials.") }
                kept.merge([
                    "name": app.name, "description": app.description, "platform_name": form["name"] ?? "",
                    "platform_type": form["type"] ?? "",
                ]) { $1 }
                return try await application(signed, app, form: kept, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func platformPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let platform = try await signed.scope.platform(try Self.id(context, "platform", "platform"))
            return try await platformView(signed, platform, form: ["name": platform.name], errors: [:])
        }
    }

    @Sendable func updatePlatform(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let platform = try await signed.scope.platform(try Self.id(context, "platform", "platform"))
            do {
                var input = PlatformInput()
                input.name = form["name"] ?? ""
                // The form shows the current credentials' identifiers: sent back unchanged, with
                // no secret typed, they keep the credentials as they are.
                let current = platform.credentialsSummary?.fields ?? [:]
                input.credentials = Self.changesCredentials(form, current: current) ? try Self.credentials(form) : nil
                let updated = try await signed.scope.updatePlatform(platform, input)
                return Self.redirect("/dashboard/platforms/\(updated.id.lowercasedString)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await platformView(signed, platform, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func deletePlatform(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let platform = try await signed.scope.platform(try Self.id(context, "platform", "platform"))
            try await signed.scope.deletePlatform(platform)
            return Self.redirect("/dashboard/apps/\(platform.applicationID.lowercasedString)")
        }
    }

    @Sendable func regenerateSecret(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let (platform, secret) = try await signed.scope.regenerateSecret(
                try await signed.scope.platform(try Self.id(context, "platform", "platform")))
            let app = try await signed.scope.application(platform.applicationID)
            return try await secretPage(
                signed, title: "New platform secret", app: app,
                explanation: "The previous secret of “\(platform.name)” no longer works; devices must register with this one.",
                identifiers: [("Platform uuid", platform.id.lowercasedString)], secretName: "Platform secret", secret: secret,
                next: "/dashboard/platforms/\(platform.id.lowercasedString)")
        }
    }

    // MARK: Pages

    func platformView(
        _ signed: SignedIn, _ platform: Platform, form: [String: String], errors: [String: String], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let app = try await signed.scope.application(platform.applicationID)
        let devices = try await store.devices.count(platformID: platform.id)
        let summary = platform.credentialsSummary
        var fields = [["key": "Kind", "value": summary.map { Self.credentialKinds[$0.kind] ?? $0.kind } ?? "none"]]
        for (key, value) in (summary?.fields ?? [:]).sorted(by: { $0.key < $1.key }) {
            fields.append(["key": Self.credentialLabels[key] ?? key, "value": value])
        }
        var view: [String: Any] = [
            "csrf": signed.session.csrf, "form": form, "errors": errors, "deviceCount": devices, "hasDevices": devices > 0,
            "cred": Self.credentialsView(form, current: summary?.fields ?? [:]),
            "credentialFields": fields,
            "platform": [
                "uuid": platform.id.lowercasedString, "app_uuid": platform.applicationID.lowercasedString, "name": platform.name,
                "type": platform.type.rawValue, "status": platform.credentialsStatus.rawValue,
                "missing": platform.credentialsStatus == .missing, "failing": platform.credentialsStatus == .failing,
            ] as [String: Any],
        ]
        if let rejection = lastRejection(platform) { view["lastRejection"] = rejection }
        return pages.page(
            "platform", view,
            layout: try await layout(signed, title: "Platform \(platform.name)", app: app).merging(errorMessage(errors)) { $1 },
            status: status)
    }

    /// The credential summary's kinds and fields (`CredentialsSummary`) as an operator reads them.
    static var credentialKinds: [String: String] {
        [
            "apns_token": "APNs token key (.p8)", "apns_certificate": "APNs certificate (.p12)",
            "fcm_service_account": "FCM service account", "vapid": "VAPID key pair", "wns": "WNS client",
        ]
    }
    static var credentialLabels: [String: String] {
        [
            "key_id": "Key id", "team_id": "Team id", "topic": "Topic (bundle id)", "environment": "Environment",
            "endpoint": "Endpoint", "project_id": "Project id", "client_email": "Service account e-mail",
            "public_key": "VAPID public key", "subject": "VAPID subject", "client_id": "Client id (package SID)",
        ]
    }

    /// Why the provider last refused this platform's credentials, from the application's
    /// activity log (this process's recent events), with its time.
    func lastRejection(_ platform: Platform) -> String? {
        guard
            let event = activity.recent(platform.applicationID).last(where: {
                $0.kind == .credentialsProblem && $0.platformID == platform.id
            })
        else { return nil }
        return "\(event.message) (\(Self.time(event.time)))"
    }

    // MARK: Helpers

    /// The credential fields a page may show again: identifiers, never a secret.
    static var shownCredentialFields: [String] { ["key_id", "team_id", "topic", "environment", "endpoint", "subject", "client_id"] }

    /// The credentials form's values: what was typed when a form was refused (its secrets left
    /// out, `secretsDropped`), else `current` (a platform's own, or none for a new one).
    static func credentialsView(_ form: [String: String], current: [String: String]) -> [String: Any] {
        let refused = form.keys.contains { $0.hasPrefix("credentials.") }
        let values =
            refused ? Dictionary(uniqueKeysWithValues: shownCredentialFields.map { ($0, form["credentials." + $0] ?? "") }) : current
        var view: [String: Any] = [:]
        for key in shownCredentialFields { view[key] = values[key] ?? "" }
        view["environment_sandbox"] = values["environment"] == "sandbox"
        view["secretsDropped"] = refused
        return view
    }

    /// Whether an edit form changes the credentials: a secret typed, or a shown identifier
    /// changed. (The environment, a select that always sends a value, counts only when the
    /// platform has credentials to compare it with.)
    static func changesCredentials(_ form: [String: String], current: [String: String]) -> Bool {
        for (key, value) in form where key.hasPrefix("credentials.") {
            let name = String(key.dropFirst("credentials.".count))
            let typed = value.trimmingASCIIWhitespace()
            if !shownCredentialFields.contains(name) {
                if !typed.isEmpty { return true }
            } else if name == "environment" {
                if let environment = current[name], typed != environment { return true }
            } else if typed != (current[name] ?? "") {
                return true
            }
        }
        return false
    }

    /// The `credentials.*` fields of a form that are filled in, as the admin API's
    /// `credentials` object; nil when none is (an edit that keeps the credentials).
    static func credentials(_ form: [String: String]) throws -> CredentialsInput? {
        var fields: [String: String] = [:]
        for (key, value) in form where key.hasPrefix("credentials.") && !value.trimmingASCIIWhitespace().isEmpty {
            fields[String(key.dropFirst("credentials.".count))] = value.replacing("\r\n", with: "\n")
        }
        guard !fields.isEmpty else { return nil }
        do {
            return try JSONDecoder().decode(CredentialsInput.self, from: JSONEncoder().encode(fields))
        } catch {
            throw APIError.badRequest("the credentials could not be read", field: "credentials")
        }
    }
}
