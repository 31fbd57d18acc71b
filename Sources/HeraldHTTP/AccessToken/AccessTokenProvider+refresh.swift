/// One request's answer, as far as the access token is concerned.
package enum AuthorizedAnswer<Outcome> {
    /// The provider answered, not with 401: the token works.
    case answered(Outcome)
    /// The provider answered 401 (`status`, its `message`); `ifFailing` is the request's outcome
    /// should the credentials turn out to be failing.
    case refused(status: Int, message: String, ifFailing: Outcome)
    /// No answer came: nothing is known about the token.
    case unanswered(Outcome)
}

extension AccessTokenProvider {
    // MARK: Refresh once on 401, then fail

    /// Sends requests `0..<count` with an access token, through `send` (the indices still to
    /// send, the bearer token; one answer per index, in order). Those the provider refuses with
    /// 401 are sent once more with a fresh token; if the provider refuses that one too, they take
    /// their `ifFailing` outcome and the credentials are failing from then on. A fresh token the
    /// provider accepts is trusted again (the next 401 earns another refresh).
    ///
    /// - Parameters:
    ///   - noToken: the outcome of the requests still to send when no token could be had.
    ///   - gaveUp: the outcome of requests still refused after the loop's guard ran out (a fresh
    ///     token is fetched at most once per refusal; the guard only stops a loop).
    /// - Returns: one outcome per request, in order.
    package nonisolated func send<Outcome>(
        count: Int, noToken: (any Error) -> Outcome, gaveUp: Outcome,
        _ send: (_ indices: [Int], _ bearer: String) async -> [AuthorizedAnswer<Outcome>]
    ) async -> [Outcome] {
        var results = [Outcome?](repeating: nil, count: count)
        var pending = Array(0..<count)
        var retriedAfter401 = false
        for _ in 0..<3 where !pending.isEmpty {
            let bearer: String
            do {
                bearer = try await token()
            } catch {
                for index in pending { results[index] = noToken(error) }
                break
            }
            var refused: [(index: Int, ifFailing: Outcome)] = []
            var refusal: (status: Int, message: String)?
            var accepted = false
            for (index, answer) in zip(pending, await send(pending, bearer)) {
                switch answer {
                case .answered(let outcome):
                    accepted = true
                    results[index] = outcome
                case .refused(let status, let message, let ifFailing):
                    refused.append((index, ifFailing))
                    refusal = (status, message)
                case .unanswered(let outcome):
                    results[index] = outcome
                }
            }
            pending = []
            if let refusal {
                switch await rejected(bearer, status: refusal.status, message: refusal.message) {
                case .retryWithNewToken:
                    retriedAfter401 = true
                    pending = refused.map(\.index)
                case .markFailing:
                    for (index, outcome) in refused { results[index] = outcome }
                }
            } else if retriedAfter401 && accepted {
                await self.accepted(bearer)
            }
        }
        return results.map { $0 ?? gaveUp }
    }
}
