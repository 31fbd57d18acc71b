import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.URLComponents
import struct Foundation.URLQueryItem

/// Topics: the application's live topics with how many devices subscribe to each and when they
/// expire; created and deleted through the same operations as `/v2/topics` (`AppTopics`).
extension DashboardController {
    var topics: AppTopics { AppTopics(store: store, clock: clock) }

    @Sendable func topicsPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            return try await topicList(signed, app, request, form: [:], errors: [:])
        }
    }

    @Sendable func createTopic(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                var input = TopicInput(name: form["name"] ?? "")
                if let expiry = form["expire_at"], !expiry.isEmpty { input.expireAt = try Self.time(expiry, field: "expireAt") }
                let (topic, created) = try await topics.create(applicationID: app.id, input)
                return try await topicList(
                    signed, app, request, form: [:], errors: [:],
                    notice: created ? "Topic “\(topic.name)” created." : "The topic “\(topic.name)” already existed; it is unchanged.")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                let field = error.field == "expireAt" ? "expire_at" : "name"
                return try await topicList(signed, app, request, form: form, errors: [field: error.message], status: error.status)
            }
        }
    }

    @Sendable func deleteTopic(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            try await topics.delete(applicationID: app.id, id: try AppTopics.id(context.parameters.get("topic")))
            return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/topics")
        }
    }

    // MARK: Pages

    /// A page of topics (the request's `q` and `page`, as `GET /v2/topics` reads them).
    func topicList(
        _ signed: SignedIn, _ app: App, _ request: Request, form: [String: String], errors: [String: String], notice: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let query = try TopicPageQuery(request.uri.queryParameters)
        let (list, total) = try await topics.list(applicationID: app.id, query)
        let subscribers = try await store.topics.subscriberCounts(applicationID: app.id, names: list.map(\.name))
        let uuid = app.id.lowercasedString
        let pages = query.totalPages(total)
        func link(_ page: Int) -> String {
            var components = URLComponents()
            components.path = "/dashboard/apps/\(uuid)/topics"
            components.queryItems =
                (query.query.map { [URLQueryItem(name: "q", value: $0)] } ?? []) + [URLQueryItem(name: "page", value: String(page))]
            return components.string ?? components.path
        }
        var view: [String: Any] = [
            "csrf": signed.session.csrf, "app": ["uuid": uuid], "form": form, "errors": errors, "q": query.query ?? "", "total": total,
            "topics": list.map { topic -> [String: Any] in
                [
                    "id": topic.id, "name": topic.name, "app": uuid, "subscribers": subscribers[topic.name] ?? 0,
                    "expires": topic.expiresAt.map(Self.time) ?? "never",
                ]
            },
        ]
        if query.page > 1 { view["previous"] = link(query.page - 1) }
        if query.page < pages { view["next"] = link(query.page + 1) }
        var layout = try await layout(signed, title: "Topics", app: app).merging(errorMessage(errors)) { $1 }
        if let notice { layout["notice"] = notice }
        return self.pages.page("topics", view, layout: layout, status: status)
    }
}
