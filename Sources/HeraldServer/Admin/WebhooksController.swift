import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// `/admin/v1/apps/:app/webhooks`: an app's webhook endpoints (create, list, show, delete) and
/// each one's latest deliveries, with a bearer admin token (docs/WEBHOOKS.md).
struct WebhooksController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    /// Which URLs may be registered (`--webhook-allow-private` also allows http:// and private addresses).
    let policy: WebhookAddressPolicy

    /// Endpoints one app may have.
    static var maximumEndpoints: Int { 20 }
    /// Deliveries listed at most.
    static var maximumListed: Int { 100 }

    func addRoutes(to router: Router<Context>) {
        router.post("admin/v1/apps/:app/webhooks", use: create)
        router.get("admin/v1/apps/:app/webhooks", use: list)
        router.get("admin/v1/apps/:app/webhooks/:webhook", use: get)
        router.delete("admin/v1/apps/:app/webhooks/:webhook", use: delete)
        router.get("admin/v1/apps/:app/webhooks/:webhook/deliveries", use: deliveries)
    }

    /// The body of a `POST`.
    struct EndpointInput: Decodable {
        var url: String
        var events: [String]

        /// The URL checked against the policy and the events parsed, or the field at fault.
        func validated(policy: WebhookAddressPolicy) throws(ValidationError) -> (String, Set<WebhookEventType>) {
            _ = try WebhookTarget(url: url, policy: policy, field: "url")
            guard !events.isEmpty else {
                throw ValidationError(message: "name at least one event: \(Self.known)", field: "events")
            }
            var parsed = Set<WebhookEventType>()
            for (index, name) in events.enumerated() {
                guard let type = WebhookEventType(rawValue: name) else {
                    throw ValidationError(message: "unknown event '\(name)'; known: \(Self.known)", field: "events[\(index)]")
                }
                guard parsed.insert(type).inserted else {
                    throw ValidationError(message: "'\(name)' is listed twice", field: "events[\(index)]")
                }
            }
            return (url, parsed)
        }

        static var known: String { WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ") }
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<WebhookEndpointView> {
        var request = request
        let app = try await application(request, context)
        let (url, events) = try await request.decodeJSON(EndpointInput.self).validated(policy: policy)
        guard try await store.webhooks.list(applicationID: app.id).count < Self.maximumEndpoints else {
            throw APIError.conflict("an application has at most \(Self.maximumEndpoints) webhook endpoints; delete one first")
        }
        let (endpoint, secret) = try await store.webhooks.create(applicationID: app.id, url: url, events: events)
        return EditedResponse(status: .created, response: WebhookEndpointView(endpoint, secret: secret))
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> ListView<WebhookEndpointView> {
        let app = try await application(request, context)
        return ListView(items: try await store.webhooks.list(applicationID: app.id).map { WebhookEndpointView($0) })
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> WebhookEndpointView {
        let app = try await application(request, context)
        return WebhookEndpointView(try await endpoint(context, of: app))
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let app = try await application(request, context)
        guard let raw = context.parameters.get("webhook"), let id = UUID(text: raw),
            try await store.webhooks.delete(id: id, applicationID: app.id)
        else { throw APIError.notFound("webhook") }
        return Response(status: .noContent)
    }

    @Sendable func deliveries(_ request: Request, context: Context) async throws -> ListView<WebhookDeliveryView> {
        let app = try await application(request, context)
        let endpoint = try await endpoint(context, of: app)
        var limit = 20
        if let raw = request.uri.queryParameters.get("limit") {
            guard let value = Int(raw), (1...Self.maximumListed).contains(value) else {
                throw APIError.badRequest("limit is a whole number from 1 to \(Self.maximumListed)", field: "limit")
            }
            limit = value
        }
        return ListView(items: try await store.webhooks.deliveries(endpointID: endpoint.id, limit: limit).map(WebhookDeliveryView.init))
    }

    // MARK: Lookups

    /// The app, if the token's scope reaches it (another tenant's app is not found).
    private func application(_ request: Request, _ context: Context) async throws -> App {
        try await AdminScope.application(request, context, auth: auth, store: store)
    }

    private func endpoint(_ context: Context, of app: App) async throws -> WebhookEndpoint {
        guard let raw = context.parameters.get("webhook"), let id = UUID(text: raw),
            let endpoint = try await store.webhooks.find(id: id, applicationID: app.id)
        else { throw APIError.notFound("webhook") }
        return endpoint
    }
}
