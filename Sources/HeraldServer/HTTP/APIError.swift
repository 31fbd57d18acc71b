import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.Data
import class Foundation.JSONEncoder

/// An error answer: `{"error":{"code":…,"message":…,"field":…}}` with its status.
package struct APIError: HTTPResponseError, Sendable, CustomStringConvertible {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    package var field: String?
    /// Extra headers, such as `WWW-Authenticate` on a 401.
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
    }

    package var description: String { "\(status.code) \(code): \(message)" }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(ErrorBody(error: .init(code: code, message: message, field: field)))
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Common errors

    static func notFound(_ what: String) -> APIError {
        APIError(.notFound, code: "not_found", message: "\(what) not found")
    }

    static func conflict(_ message: String) -> APIError {
        APIError(.conflict, code: "conflict", message: message)
    }

    static func badRequest(_ message: String, field: String? = nil, code: String = "invalid_field") -> APIError {
        APIError(.badRequest, code: code, message: message, field: field)
    }

    static func unauthorized(_ message: String, scheme: String) -> APIError {
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = "\(scheme) realm=\"herald\""
        return APIError(.unauthorized, code: "unauthorized", message: message, headers: headers)
    }

    static func forbidden(_ message: String) -> APIError {
        APIError(.forbidden, code: "forbidden", message: message)
    }

    /// A 400, except for well-formed requests refused for what they meet rather than what they
    /// say: a platform other than the credentials' (`platform_mismatch`, 403: not what these
    /// credentials may do), and 409 for what conflicts with the clock or the stored data: a time
    /// already past (`in_the_past`), an end not after its start (`invalid_range`), a location the
    /// application does not have (`unknown_location`), a recurring schedule with no occurrence
    /// left before its end (`no_occurrence`).
    init(_ error: ValidationError) {
        let status: HTTPResponse.Status =
            switch error.code {
            case "platform_mismatch": .forbidden
            case "in_the_past", "invalid_range", "unknown_location", "no_occurrence": .conflict
            default: .badRequest
            }
        self.init(status, code: error.code, message: error.message, field: error.field)
    }
}

/// The JSON body of an error answer.
struct ErrorBody: Codable {
    struct Detail: Codable {
        var code: String
        var message: String
        var field: String?
    }
    var error: Detail
}
