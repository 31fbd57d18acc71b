import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder

/// A push as Herald keeps it: checked once, when it is accepted, and stored in this typed form,
/// so that the workers that deliver it only decode it (no second validation, no second look at
/// the request text).
///
/// The stored text carries `version`. Version 1 is this struct. Rows without it (version 0)
/// were written by Herald before the push was stored typed: they hold the `POST /v1/push` body as
/// given, and are read by checking that body exactly as it was checked when accepted (see
/// `init(stored:acceptedAt:)`), so old rows keep being delivered and shown with no migration.
/// A row of a version above `currentVersion` was written by a newer Herald and is refused.
package struct AcceptedPush: Sendable, Equatable, Codable {
    /// The version Herald writes.
    package static let currentVersion = 1

    /// The shape of the stored form (`currentVersion` for what this Herald writes).
    package var version: Int
    /// The validated push.
    package var push: Push
    /// For a schedule: the request as `/v1/schedules` shows it (`scheduleIn` turned into
    /// `scheduleAt`), the base a change (`PUT`) is merged into. Nil for a push sent at once.
    package var request: [String: JSONValue]?

    /// A push accepted now, in the current version.
    package init(_ push: Push, request: [String: JSONValue]? = nil) {
        self.version = Self.currentVersion
        self.push = push
        self.request = request
    }

    /// Checks `input` as `POST /v1/push` does: the Pivotal rules, then what each provider would
    /// refuse (payload size, bad keys; `Push.checkRenderable`). The one acceptance check.
    ///
    /// - Parameter now: epoch milliseconds, for `scheduleIn` and the time to live.
    package static func check(_ input: PushInput, now: Int64) throws(ValidationError) -> Push {
        let push = try input.validated(now: now)
        try push.checkRenderable(now: now)
        return push
    }

    // MARK: Stored form

    /// The text the store keeps.
    package var storedText: String {
        // Encoding plain values (strings, numbers, arrays, objects) cannot fail.
        let data = (try? Self.encoder.encode(self)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a stored push: the current version as it is; version 0 (the request text alone) is
    /// checked as it was when accepted, at `acceptedAt` (epoch ms), and carries the request.
    package init(stored text: String, acceptedAt: Int64) throws(StoredPushError) {
        switch try Self.form(text) {
        case .current(let accepted):
            self = accepted
        case .version0(let input, let request):
            do {
                self.init(try Self.check(input, now: acceptedAt), request: request)
            } catch {
                throw StoredPushError(.refused(error))
            }
        }
    }

    /// The request members of a stored push, without checking it: what a schedule shows and a
    /// change starts from. Nil for a push sent at once (it keeps no request).
    package static func request(stored text: String) throws(StoredPushError) -> [String: JSONValue]? {
        switch try form(text) {
        case .current(let accepted): return accepted.request
        case .version0(_, let request): return request
        }
    }

    /// The stored text, by its version.
    private static func form(_ text: String) throws(StoredPushError) -> StoredForm {
        do {
            return try JSONDecoder().decode(StoredForm.self, from: Data(text.utf8))
        } catch let error as StoredPushError {
            throw error
        } catch {
            throw StoredPushError(.unreadable("\(error)"))
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// The stored text by version.
    private enum StoredForm: Decodable {
        case current(AcceptedPush)
        /// A `POST /v1/push` body as given, and its members.
        case version0(PushInput, request: [String: JSONValue])

        enum CodingKeys: String, CodingKey {
            case version
        }

        init(from decoder: any Decoder) throws {
            let version = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int.self, forKey: .version) ?? 0
            switch version {
            case 0:
                self = .version0(try PushInput(from: decoder), request: try [String: JSONValue](from: decoder))
            case 1:
                self = .current(try AcceptedPush(from: decoder))
            default:
                throw StoredPushError(.newerVersion(version))
            }
        }
    }
}

/// A stored push that cannot be delivered: unreadable, written by a newer Herald, or an older
/// Herald's push that the rules it was accepted under no longer let through.
package struct StoredPushError: Error, Sendable, CustomStringConvertible {
    // `fileprivate`, not `private`: `AcceptedPush`, beside it, says which reason it was.
    fileprivate enum Reason: Sendable {
        case unreadable(String)
        case newerVersion(Int)
        case refused(ValidationError)
    }

    private let reason: Reason

    fileprivate init(_ reason: Reason) {
        self.reason = reason
    }

    /// The validation error of a version-0 push refused by today's checks, if that is the reason.
    package var validationError: ValidationError? {
        if case .refused(let error) = reason { return error }
        return nil
    }

    package var description: String {
        switch reason {
        case .unreadable(let detail): "the stored push cannot be read: \(detail)"
        case .newerVersion(let version):
            "the stored push is version \(version); this Herald reads up to \(AcceptedPush.currentVersion)"
        case .refused(let error): "the stored push no longer validates: \(error)"
        }
    }
}
