import AsyncHTTPClient
import NIOCore
import NIOHPACK
import NIOHTTP1

extension HTTP2ConnectionPool {
    /// Requests in flight at once over HTTP/1.1, per call: each needs a connection of its own.
    package static let http1Concurrency = 64

    /// Sends the requests over HTTP/2, or over HTTP/1.1 with `http1Client` when the server does
    /// not offer h2 (an HTTP/1.1-only endpoint, or a TLS-terminating proxy in front of it): the
    /// requests HTTP/2 could not carry for that reason go again over HTTP/1.1, and once the pool
    /// has seen the refusal every later call goes straight there. The responses come in the
    /// requests' order.
    ///
    /// - Parameter timeout: how long one HTTP/1.1 request may take, answer included.
    package func send(
        _ requests: [HTTP2Request], fallingBackTo http1Client: HTTPClient, timeout: TimeAmount = .seconds(30)
    ) async -> [HTTP2Response] {
        var responses: [HTTP2Response]
        var overHTTP1: [Int]
        if refusedHTTP2 {
            responses = Array(repeating: .notSent, count: requests.count)
            overHTTP1 = Array(requests.indices)
        } else {
            responses = await send(requests)
            guard refusedHTTP2 else { return responses }
            overHTTP1 = responses.indices.filter { index in
                switch responses[index] {
                case .answered: false
                case .notSent, .failed: true
                }
            }
        }
        let answers = await Self.sendOverHTTP1(overHTTP1.map { requests[$0] }, client: http1Client, timeout: timeout)
        for (index, answer) in zip(overHTTP1, answers) { responses[index] = answer }
        return responses
    }

    /// async-http-client, `http1Concurrency` requests at a time; the answers in the requests' order.
    static func sendOverHTTP1(_ requests: [HTTP2Request], client: HTTPClient, timeout: TimeAmount) async -> [HTTP2Response] {
        await withTaskGroup(of: (Int, HTTP2Response).self) { group in
            var responses = [HTTP2Response](repeating: .notSent, count: requests.count)
            var next = 0
            func addNext() {
                guard next < requests.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await sendOverHTTP1(requests[index], client: client, timeout: timeout)) }
            }
            for _ in 0..<Self.http1Concurrency { addNext() }
            for await (index, response) in group {
                responses[index] = response
                addNext()
            }
            return responses
        }
    }

    /// One request as HTTP/1.1: its pseudo-headers become the URL and the method.
    static func sendOverHTTP1(_ request: HTTP2Request, client: HTTPClient, timeout: TimeAmount) async -> HTTP2Response {
        let headers = request.headers
        guard let authority = headers.first(name: ":authority"), let path = headers.first(name: ":path") else {
            return .failed("the request has no :authority or :path")
        }
        var http1 = HTTPClientRequest(url: "\(headers.first(name: ":scheme") ?? "https")://\(authority)\(path)")
        http1.method = HTTPMethod(rawValue: headers.first(name: ":method") ?? "POST")
        for (name, value, _) in headers where !name.hasPrefix(":") {
            http1.headers.add(name: name, value: value)
        }
        http1.body = .bytes(request.body)
        do {
            let response = try await client.execute(http1, timeout: timeout)
            let body = try await response.body.collect(upTo: 1 << 20)
            return .answered(
                status: Int(response.status.code), headers: HPACKHeaders(httpHeaders: response.headers),
                body: body.readableBytes == 0 ? nil : body)
        } catch {
            return .failed("over HTTP/1.1: \(error)")
        }
    }
}
