import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

/// A running Pivotal Push API (or a Herald, which serves the same API), read with one set of
/// HTTP Basic credentials: every answer within a bounded time, or a clear `SourceError`.
struct PivotalSource: Sendable {
    let http: HTTPClient
    /// The base URL, without a trailing `/`.
    let base: String
    /// The application's `uuid:api_key`.
    let appCredentials: String
    /// The longest the source may stay silent (`--source-timeout`); a whole request, answer and
    /// body, may take four times this.
    let timeout: TimeAmount
    /// The waits before each retry of a request the source failed transiently (a 5xx, a broken
    /// connection), doubling from the first: bounded, so a source that stays down ends the import.
    var retryDelays: [Duration] = Self.retryDelays(first: .milliseconds(500))
    /// Pages of a listing read at once.
    var pagesInFlight = 4

    /// `count` waits, doubling from `first` (1 + 2 + 4 + 8 + 16 times `first` by default).
    static func retryDelays(first: Duration, count: Int = 5) -> [Duration] {
        (0..<count).map { first * (1 << $0) }
    }

    /// `GET path` with the application's credentials; the answer as JSON.
    func get(_ path: String) async throws(SourceError) -> JSONValue {
        try await get(path, credentials: appCredentials)
    }

    /// `GET path` with `credentials` (`user:password`); the answer as JSON.
    func get(_ path: String, credentials: String) async throws(SourceError) -> JSONValue {
        let (status, body) = try await fetchRetrying(path, credentials: credentials)
        guard status == .ok else {
            throw status == .unauthorized || status == .forbidden
                ? SourceError(path: path, .refused(status.code)) : SourceError(path: path, .failed(status.code, Self.excerpt(body)))
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw SourceError(path: path, .notJSON(Self.excerpt(body)))
        }
    }

    /// The status of `GET path` with `credentials`, whatever it is (a check of a platform secret).
    func status(_ path: String, credentials: String) async throws(SourceError) -> HTTPResponseStatus {
        try await fetch(path, credentials: credentials).0
    }

    /// `fetch`, again after each of `retryDelays` while the source answers a 5xx or the
    /// connection breaks; the last answer (or failure) says how many times it was asked.
    private func fetchRetrying(_ path: String, credentials: String) async throws(SourceError) -> (HTTPResponseStatus, Data) {
        var attempt = 0
        while true {
            let delay: Duration? = attempt < retryDelays.count ? retryDelays[attempt] : nil
            attempt += 1
            do throws(SourceError) {
                let (status, body) = try await fetch(path, credentials: credentials)
                guard status.code >= 500, let delay else {
                    if status.code >= 500, attempt > 1 {
                        throw SourceError(path: path, .failed(status.code, Self.excerpt(body)), attempts: attempt)
                    }
                    return (status, body)
                }
                try? await Task.sleep(for: delay)
            } catch {
                guard case .unreachable = error.reason, let delay else {
                    throw attempt > 1 ? SourceError(path: path, error.reason, attempts: attempt) : error
                }
                try? await Task.sleep(for: delay)
            }
            if Task.isCancelled { throw SourceError(path: path, .unreachable("cancelled")) }
        }
    }

    private func fetch(_ path: String, credentials: String) async throws(SourceError) -> (HTTPResponseStatus, Data) {
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        request.headers.add(name: "Accept", value: "application/json")
        do {
            // The read timeout of `http` bounds a stall between bytes; this deadline bounds the whole.
            let deadline = NIODeadline.now() + timeout * 4
            let response = try await http.execute(request, deadline: deadline)
            let body = try await response.body.collect(upTo: 64 << 20)
            return (response.status, Data(body.readableBytesView))
        } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
            throw SourceError(path: path, .stalled(timeout))
        } catch {
            throw SourceError(path: path, .unreachable(String(describing: error)))
        }
    }

    /// The first 200 characters of an answer, on one line, to show in a message.
    static func excerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? "an empty body" : "'\(text)'"
    }

    // MARK: Pages

    /// Every item of a paged listing (`page`, `size`, `totalPages`), `size` a page, handed to
    /// `each` in page order. The first page tells how many there are; the others are read
    /// `pagesInFlight` at once.
    /// - Parameter key: the member holding the items (`registrations`, `topics`, …).
    func pages(
        _ path: String, key: String, size: Int = 50, credentials: String? = nil,
        each: (_ items: [JSONValue], _ total: Int?) async throws -> Void
    ) async throws {
        let separator = path.contains("?") ? "&" : "?"
        let credentials = credentials ?? appCredentials
        let source = self
        @Sendable func read(_ page: Int) async throws(SourceError) -> (items: [JSONValue], totalPages: Int, total: Int?) {
            let pagePath = "\(path)\(separator)size=\(size)&page=\(page)"
            let answer = try await source.get(pagePath, credentials: credentials)
            guard let object = answer.objectValue, case .array(let items)? = object[key] else {
                throw SourceError(path: pagePath, .notPivotal("no '\(key)' list"))
            }
            let totalPages = object["totalPages"]?.lenientInt.map(Int.init) ?? 1
            let total = object.first { $0.key.hasPrefix("total") && $0.key != "totalPages" }?.value.lenientInt.map(Int.init)
            return (items, totalPages, total)
        }
        let first = try await read(1)
        try await each(first.items, first.total)
        guard first.totalPages > 1, !first.items.isEmpty else { return }
        var reads: [Task<(items: [JSONValue], totalPages: Int, total: Int?), any Error>] = []
        var next = 2
        do {
            while true {
                while next <= first.totalPages, reads.count < max(1, pagesInFlight) {
                    let page = next
                    reads.append(Task { try await read(page) })
                    next += 1
                }
                guard !reads.isEmpty else { return }
                let page = try await reads.removeFirst().value
                try await each(page.items, page.total)
                // A listing that shrank meanwhile ends at its first empty page.
                if page.items.isEmpty {
                    for read in reads { read.cancel() }
                    return
                }
            }
        } catch {
            for read in reads { read.cancel() }
            throw error
        }
    }
}

/// Why the source could not be read: the request's path and what went wrong, as a message an
/// operator can act on.
struct SourceError: Error, CustomStringConvertible {
    fileprivate enum Reason {
        case refused(UInt)
        case failed(UInt, String)
        case notJSON(String)
        case notPivotal(String)
        case stalled(TimeAmount)
        case unreachable(String)
    }

    let path: String
    fileprivate let reason: Reason
    /// How many times the source was asked (more than one after transient failures).
    private let attempts: Int

    fileprivate init(path: String, _ reason: Reason, attempts: Int = 1) {
        self.path = path
        self.reason = reason
        self.attempts = attempts
    }

    /// An answer that is JSON but not the shape the Pivotal API gives.
    static func notPivotal(_ path: String, _ detail: String) -> SourceError {
        SourceError(path: path, .notPivotal(detail))
    }

    var description: String {
        attempts > 1 ? "\(reasonText) (asked \(attempts) times)" : reasonText
    }

    private var reasonText: String {
        switch reason {
        case .refused(let status):
            return "the source refused the credentials (\(status)) on GET \(path): check --app UUID:API_KEY (or the platform's UUID:SECRET)"
        case .failed(let status, let body):
            return "the source answered \(status) to GET \(path), with \(body)"
        case .notJSON(let body):
            return "the source's answer to GET \(path) is not JSON (\(body)): is --from the Pivotal Push API's URL?"
        case .notPivotal(let detail):
            return "the source's answer to GET \(path) is not the Pivotal Push API's shape: \(detail)"
        case .stalled(let timeout):
            return "the source did not answer GET \(path) within \(timeout.nanoseconds / 1_000_000_000) s (--source-timeout)"
        case .unreachable(let error):
            return "cannot reach the source for GET \(path): \(error)"
        }
    }
}
