import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore

/// The OAuth2 token request both FCM (a JWT-bearer assertion) and WNS (client credentials)
/// make: a form POSTed to the token endpoint, and its JSON answer sorted into granted, refused
/// (the credentials are at fault) or unavailable (try later).
package enum OAuthTokenEndpoint {
    /// What the token endpoint said.
    package enum Answer: Sendable, Equatable {
        /// 200 with an `access_token`; `expiresIn` is nil when the answer gives none.
        case granted(accessToken: String, expiresIn: Int64?)
        /// A 4xx other than 408 and 429: the OAuth2 `error` (or `HTTP <status>`) and its description.
        case refused(status: Int, error: String, description: String)
        /// 5xx, 408, 429 or a 200 without a token; `retryAfter` when the endpoint said.
        case unavailable(status: Int, description: String, retryAfter: Duration?)
    }

    /// POSTs `form` (`name=value` pairs, form-encoded here) to `url` and reads the answer.
    /// Throws only when no answer came.
    package static func request(
        _ form: [(String, String)], at url: String, httpClient: HTTPClient, clock: EpochClock
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body(form)))
        let response = try await httpClient.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)))?.objectValue ?? [:]
        if status == 200 {
            guard let accessToken = json["access_token"]?.stringValue, !accessToken.isEmpty else {
                return .unavailable(status: status, description: "the token endpoint's answer holds no access_token", retryAfter: nil)
            }
            return .granted(accessToken: accessToken, expiresIn: seconds(json["expires_in"]))
        }
        let error = json["error"]?.stringValue
        let description = json["error_description"]?.stringValue ?? error ?? "HTTP \(status)"
        if (400..<500).contains(status), status != 408, status != 429 {
            return .refused(status: status, error: error ?? "HTTP \(status)", description: description)
        }
        return .unavailable(
            status: status, description: description,
            retryAfter: RetryAfter.delay(response.headers.first(name: "retry-after"), at: clock.now))
    }

    /// The request body: `name=value` pairs, every value form-encoded.
    package static func body(_ form: [(String, String)]) -> String {
        form.map { "\($0)=\(formEncoded($1))" }.joined(separator: "&")
    }

    /// `expires_in` as a number or a numeric string.
    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let seconds)?: seconds
        case .double(let seconds)?: Int64(seconds)
        case .string(let text)?: Int64(text)
        case .null?, .bool?, .array?, .object?, nil: nil
        }
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters percent-encoded.
    package static func formEncoded(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xf, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
