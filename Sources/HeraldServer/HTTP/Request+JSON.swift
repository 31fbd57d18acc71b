import HeraldCore
import Hummingbird
import NIOCore

import struct Foundation.Data
import class Foundation.JSONDecoder

extension Request {
    /// Reads the body (at most `Limits.requestBodyBytes`, chunked or not) and decodes it as JSON,
    /// naming the field at fault when it does not fit `T`, or when any string or member name in it
    /// holds a NUL character (no backend stores one faithfully; see `String.requireStorable`).
    /// This is where every body's text is checked, whichever fields the route reads.
    mutating func decodeJSON<T: Decodable>(_ type: T.Type) async throws -> T {
        try Self.decodeJSONBody(T.self, try await collectJSONBody())
    }

    /// A registration body (`POST`/`PUT /v1/registration`), as `decodeJSON` reads it: the plain
    /// shape the PCF SDKs send is read by `RegistrationInput.scan`, anything else by the decoder.
    mutating func decodeRegistration() async throws -> RegistrationInput {
        let buffer = try await collectJSONBody()
        if let input = buffer.withUnsafeReadableBytes(RegistrationInput.scan) { return input }
        return try Self.decodeJSONBody(RegistrationInput.self, buffer)
    }

    /// The body, at most `Limits.requestBodyBytes` and not empty. A body declared as anything but
    /// JSON is refused with 415 before it is read; one without a `Content-Type` is read as JSON
    /// (a script written for Pivotal's API may send none).
    private mutating func collectJSONBody() async throws -> ByteBuffer {
        if let contentType = headers[.contentType], !Self.isJSONMediaType(contentType) {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_media_type",
                message: "the request body must be application/json, not \(contentType.prefix(100))")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await collectBody(upTo: Limits.requestBodyBytes)
        } catch is NIOTooManyBytesError {
            throw APIError(
                .contentTooLarge, code: "body_too_large", message: "the request body is larger than \(Limits.requestBodyBytes) bytes")
        }
        guard buffer.readableBytes > 0 else {
            throw APIError.badRequest("the request body is empty; a JSON object is expected", code: "invalid_json")
        }
        return buffer
    }

    private static func decodeJSONBody<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer) throws -> T {
        do {
            return try Self.decodeJSONDocument(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw APIError(error)
        }
    }

    /// Decodes one JSON document (a body, a line of an NDJSON body): a `ValidationError` naming
    /// the field when it does not fit `T` or when any text in it holds a NUL character.
    static func decodeJSONDocument<T: Decodable>(
        _ type: T.Type, from data: Data, decoder: JSONDecoder = JSONDecoder()
    ) throws(ValidationError) -> T {
        do {
            if JSONValue.mayContainNUL(data), let document = try? decoder.decode(JSONValue.self, from: data) {
                try document.requireStorable()
            }
            return try decoder.decode(T.self, from: data)
        } catch let error as ValidationError {
            throw error
        } catch let error as DecodingError {
            throw Self.validationError(error)
        } catch {
            throw ValidationError(code: "invalid_json", message: "the body could not be decoded")
        }
    }

    /// The field and reason of a body that does not fit the expected type.
    static func validationError(_ error: DecodingError) -> ValidationError {
        func path(_ codingPath: [any CodingKey]) -> String? {
            var out = ""
            for key in codingPath {
                if let index = key.intValue {
                    out += "[\(index)]"
                } else {
                    out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return out.isEmpty ? nil : out
        }
        switch error {
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            let expected = Self.typeName(type)
            return ValidationError(
                code: "invalid_type", message: "\(field ?? "the body") must be \(expected)", field: field)
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            return ValidationError(
                code: "invalid_type", message: "\(field ?? "the body") must be \(Self.typeName(type)), not null", field: field)
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return ValidationError(code: "missing_field", message: "\(field ?? key.stringValue) is required", field: field)
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return ValidationError(code: "invalid_json", message: "the body is not valid JSON")
            }
            let field = path(context.codingPath)
            return ValidationError(code: "invalid_field", message: context.debugDescription, field: field)
        @unknown default:
            return ValidationError(code: "invalid_json", message: "the body could not be decoded")
        }
    }

    /// Whether a `Content-Type` value names JSON: `application/json` or a `+json` type, with any
    /// parameters (`; charset=utf-8`).
    static func isJSONMediaType(_ value: String) -> Bool {
        let type = value.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }.lowercased()
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }

    /// How a message names the JSON type the decoder expected. A keyed container is reported as
    /// a dictionary type, which is also a `Collection`, so it is told apart first.
    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is [String].Type: "a list of strings"
        case is any JSONObjectType.Type: "an object"
        default: type is any Collection.Type ? "a list" : "an object"
        }
    }
}

/// Dictionaries, which the decoder names when it expected a JSON object.
private protocol JSONObjectType {}
extension Dictionary: JSONObjectType {}
