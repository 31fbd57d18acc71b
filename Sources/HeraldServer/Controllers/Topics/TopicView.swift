import HeraldCore
import Hummingbird

/// A topic as the topics API shows it: `id`, `name`, and `expireAt` (epoch ms) when it expires.
struct TopicView: ResponseEncodable, Decodable, Sendable, Equatable {
    var id: Int64
    var name: String
    var expireAt: Int64?

    init(_ topic: Topic) {
        id = topic.id
        name = topic.name
        expireAt = topic.expiresAt
    }
}
