import HeraldCore
import HeraldStore
import Hummingbird

/// `/v2/topics`: an application's topics, listed, created (one or a batch) and deleted, with app
/// credentials. Topics that have expired are gone for all of these.
struct TopicsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let clock: EpochClock

    /// The operations this API shares with the dashboard.
    var topics: AppTopics { AppTopics(store: store, clock: clock) }

    func addRoutes(to router: Router<Context>) {
        let group = router.group("v2/topics")
        group.get(use: list)
        group.post(use: create)
        group.post("batch", use: createBatch)
        group.delete("batch", use: deleteBatch)
        group.delete(":topic_id", use: delete)
    }

    struct Page: ResponseEncodable {
        var topics: [TopicView]
        var totalTopics: Int
        var totalPages: Int
        var page: Int
        var size: Int
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Page {
        let app = try await auth.application(request)
        let query = try TopicPageQuery(request.uri.queryParameters)
        let (topics, total) = try await self.topics.list(applicationID: app.id, query)
        return Page(
            topics: topics.map(TopicView.init), totalTopics: total, totalPages: query.totalPages(total), page: query.page,
            size: query.size)
    }

    /// 201 with the new topic, or 200 with the one that already had this name (unchanged).
    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<TopicView> {
        var request = request
        let app = try await auth.application(request)
        let result = try await topics.create(applicationID: app.id, try await request.decodeJSON(TopicInput.self))
        return EditedResponse(status: result.created ? .created : .ok, response: TopicView(result.topic))
    }

    struct BatchCreated: ResponseEncodable {
        var numTopicsCreated: Int
        var numTopicsExisted: Int
        /// Only when the request asked for `returnTopics`.
        var topics: [TopicView]?
    }

    /// Creates up to 1024 topics at once; a name given twice counts once.
    @Sendable func createBatch(_ request: Request, context: Context) async throws -> EditedResponse<BatchCreated> {
        var request = request
        let app = try await auth.application(request)
        let input = try await request.decodeJSON(TopicBatchInput.self)
        let results = try await store.topics.create(applicationID: app.id, try input.validated(now: clock.now.epochMilliseconds))
        let created = results.filter { $0.created }.count
        return EditedResponse(
            status: .created,
            response: BatchCreated(
                numTopicsCreated: created, numTopicsExisted: results.count - created,
                topics: input.returnTopics == true ? results.map { TopicView($0.topic) } : nil))
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        try await topics.delete(applicationID: app.id, id: try AppTopics.id(context.parameters.get("topic_id")))
        return Response(status: .noContent)
    }

    struct BatchDeleted: ResponseEncodable {
        var numTopicsDeleted: Int
    }

    /// Deletes the listed topics of this application; ids of other applications' topics, or of
    /// topics that do not exist or expired, are not counted.
    @Sendable func deleteBatch(_ request: Request, context: Context) async throws -> BatchDeleted {
        var request = request
        let app = try await auth.application(request)
        let ids = try await request.decodeJSON(TopicIDsInput.self).validated()
        return BatchDeleted(numTopicsDeleted: try await store.topics.delete(applicationID: app.id, ids: ids))
    }
}
