import Foundation
import HeraldCore
import NIOCore
import NIOHPACK

/// One request for an `HTTP2ConnectionPool`: its header block, pseudo-headers (`:method`,
/// `:scheme`, `:authority`, `:path`) first, and the body.
///
/// The block is either a general header list, or the fields a batch's requests share
/// (`HTTP2SharedHeaders`) with the two values that differ per request: the path's last part
/// and a request id. The second form is for fan-outs (APNs): it builds no header list per
/// request, and the encoder writes the shared fields' bytes as it kept them (see
/// `HTTP2FrameEncoder.encodeBlock`).
package struct HTTP2Request: Sendable {
    enum Head: Sendable {
        case fields(HPACKHeaders)
        case shared(HTTP2SharedHeaders, pathSuffix: String, id: UUID)
    }

    let head: Head
    package var body: ByteBuffer

    package init(headers: HPACKHeaders, body: ByteBuffer) {
        self.head = .fields(headers)
        self.body = body
    }

    /// A request of a batch: `shared`'s fields, its path ending in `pathSuffix`, and `id` in
    /// `shared`'s id field.
    package init(shared: HTTP2SharedHeaders, pathSuffix: String, id: UUID, body: ByteBuffer) {
        self.head = .shared(shared, pathSuffix: pathSuffix, id: id)
        self.body = body
    }

    /// The header block as a list (built for a request of shared fields: for the HTTP/1.1
    /// fallback, validation and tests, not for the fan-out's path).
    package var headers: HPACKHeaders {
        switch head {
        case .fields(let headers): headers
        case .shared(let shared, let pathSuffix, let id): shared.headers(pathSuffix: pathSuffix, id: id)
        }
    }
}

/// The header fields a batch's requests share, for `HTTP2Request(shared:…)`: a request's block is
/// `:path` (`pathPrefix` and the request's suffix, never in the HPACK table: it differs per
/// request), `pseudoHeaders`, the request's id under `idName` (after every pseudo-header, RFC
/// 9113 §8.3; not in the table either), then `fields`. Immutable, so one instance is shared by
/// reference; the encoder recognises it by identity.
package final class HTTP2SharedHeaders: Sendable {
    package let pathPrefix: String
    /// The pseudo-headers after `:path`: `:method`, `:scheme`, `:authority`.
    package let pseudoHeaders: HPACKHeaders
    package let idName: String
    /// The regular fields after the id.
    package let fields: HPACKHeaders

    package init(pathPrefix: String, pseudoHeaders: HPACKHeaders, idName: String, fields: HPACKHeaders) {
        self.pathPrefix = pathPrefix
        self.pseudoHeaders = pseudoHeaders
        self.idName = idName
        self.fields = fields
    }

    /// One request's block as a header list, as the encoder's general path takes it.
    func headers(pathSuffix: String, id: UUID) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(pseudoHeaders.count + fields.count + 2)
        headers.add(name: ":path", value: pathPrefix + pathSuffix, indexing: .nonIndexable)
        headers.add(contentsOf: pseudoHeaders)
        headers.add(name: idName, value: id.lowercasedString, indexing: .nonIndexable)
        headers.add(contentsOf: fields)
        return headers
    }
}

/// What became of one request.
package enum HTTP2Response: Sendable {
    /// An HTTP answer: its status, headers and body (nil when empty).
    case answered(status: Int, headers: HPACKHeaders, body: ByteBuffer?)
    /// Never reached the server (queued when the connection closed, refused, above a GOAWAY):
    /// safe to send again.
    case notSent
    /// May or may not have reached the server.
    case failed(String)
}
