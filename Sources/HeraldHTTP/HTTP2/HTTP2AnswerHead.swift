import NIOHPACK

/// A header block from the server as the connection reads it: the status and the fields kept
/// (`HTTP2AnswerFields`).
struct HTTP2AnswerHead: Equatable {
    /// The first `:status` field's value as a number; nil without one (a trailer block) or when
    /// it is not a number.
    var status: Int?
    /// The fields kept, in order.
    var fields: HPACKHeaders
}
