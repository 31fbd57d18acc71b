import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// Applications: the list, create, edit, delete, a new API key.
extension DashboardController {
    @Sendable func applicationsPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            try await applications(signed, form: [:], errors: [:])
        }
    }

    @Sendable func createApplication(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            var input = ApplicationInput()
            input.name = form["name"] ?? ""
            input.description = form["description"]
            input.tenantID = form["tenant_id"].flatMap { $0.isEmpty ? nil : $0 }
            do {
                let (app, apiKey) = try await signed.scope.createApplication(input)
                return try await secretPage(
                    signed, title: "Application created", app: app,
                    explanation: "The application “\(app.name)” exists. Backends send pushes with its uuid and this API key.",
                    identifiers: [("Application uuid", app.id.lowercasedString)], secretName: "API key", secret: apiKey,
                    next: "/dashboard/apps/\(app.id.lowercasedString)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await applications(signed, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func applicationPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            return try await application(signed, app, form: ["name": app.name, "description": app.description], errors: [:])
        }
    }

    @Sendable func updateApplication(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            var input = ApplicationInput()
            input.name = form["name"] ?? ""
            input.description = form["description"] ?? ""
            if form["checkboxes"] != nil {
                input.includeReceiptID = form["include_receipt_id"] == "true"
                input.verifyCustomUserID = form["verify_custom_user_id"] == "true"
            }
            do {
                let updated = try await signed.scope.updateApplication(app, input)
                return Self.redirect("/dashboard/apps/\(updated.id.lowercasedString)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await application(signed, app, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func deleteApplication(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            try await signed.scope.deleteApplication(try await signed.scope.application(try Self.id(context, "app", "application")))
            return Self.redirect("/dashboard/apps")
        }
    }

    @Sendable func regenerateAPIKey(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let (app, apiKey) = try await signed.scope.regenerateAPIKey(
                try await signed.scope.application(try Self.id(context, "app", "application")))
            return try await secretPage(
                signed, title: "New API key", app: app,
                explanation: "The previous API key of “\(app.name)” no longer works; pushes must use this one.",
                identifiers: [("Application uuid", app.id.lowercasedString)], secretName: "API key", secret: apiKey,
                next: "/dashboard/apps/\(app.id.lowercasedString)")
        }
    }

    // MARK: Pages

    func applications(
        _ signed: SignedIn, form: [String: String], errors: [String: String], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let apps = try await signed.scope.applications()
        var view: [String: Any] = [
            "csrf": signed.session.csrf, "form": form, "errors": errors, "hasApps": !apps.isEmpty,
            "apps": apps.map { ["uuid": $0.id.lowercasedString, "name": $0.name, "description": $0.description] },
        ]
        if signed.scope.isRoot {
            view["isRoot"] = true
            // The default tenant first: a root token's applications go there unless told otherwise.
            let tenants = try await store.tenants.list().sorted {
                ($0.name == Bootstrap.defaultTenantName ? 0 : 1, $0.name) < ($1.name == Bootstrap.defaultTenantName ? 0 : 1, $1.name)
            }
            view["tenants"] = tenants.map { ["id": $0.id.lowercasedString, "name": $0.name] }
        }
        return pages.page(
            "apps", view, layout: try await layout(signed, title: "Applications", apps: apps).merging(errorMessage(errors)) { $1 },
            status: status)
    }

    func application(
        _ signed: SignedIn, _ app: App, form: [String: String], errors: [String: String], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let platforms = try await signed.scope.platforms(of: app)
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "form": form, "errors": errors,
            "delivery": Self.deliveryView(try await signed.scope.deliverySettings(of: app), form: form), "timeZones": Self.timeZones,
            "app": [
                "uuid": app.id.lowercasedString, "name": app.name, "description": app.description,
                "include_receipt_id": app.includesReceiptID, "verify_custom_user_id": app.verifiesCustomUserID,
            ] as [String: Any],
            "hasPlatforms": !platforms.isEmpty, "cred": Self.credentialsView(form, current: [:]),
            "newType": [form["platform_type"] ?? "ios": true],
            "platforms": platforms.map {
                ["uuid": $0.id.lowercasedString, "name": $0.name, "type": $0.type.rawValue, "status": $0.credentialsStatus.rawValue]
            },
        ]
        return pages.page(
            "app", view, layout: try await layout(signed, title: app.name, app: app).merging(errorMessage(errors)) { $1 },
            status: status)
    }

    /// A secret shown once (an API key, a platform secret), never cached.
    func secretPage(
        _ signed: SignedIn, title: String, app: App?, explanation: String, identifiers: [(String, String)], secretName: String,
        secret: String, next: String
    ) async throws -> Response {
        let view: [String: Any] = [
            "explanation": explanation, "identifiers": identifiers.map { ["key": $0.0, "value": $0.1] }, "secretName": secretName,
            "secret": secret, "next": next,
        ]
        return pages.page("secret", view, layout: try await layout(signed, title: title, app: app))
    }

    /// A summary at the top of the page when a form was refused.
    func errorMessage(_ errors: [String: String]) -> [String: Any] {
        errors.isEmpty ? [:] : ["errorMessage": "Not saved: " + errors.values.sorted().joined(separator: "; ")]
    }
}
