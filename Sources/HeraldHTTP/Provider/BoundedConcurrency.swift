/// Runs one asynchronous step per element, at most `limit` at a time: for a provider whose
/// protocol sends one notification per request (WNS over HTTP/1.1).
package enum BoundedConcurrency {
    /// The results of `body` for each element, in the elements' order. Once `stopStarting`
    /// says so (a graceful shutdown), no new step starts: the elements not started get `notStarted`.
    package static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], limit: Int, notStarted: Result, stopStarting: @Sendable () -> Bool,
        _ body: @escaping @Sendable (Element) async -> Result
    ) async -> [Result] {
        var results = [Result](repeating: notStarted, count: elements.count)
        await withTaskGroup(of: (Int, Result).self) { group in
            var next = 0
            func addNext() {
                guard next < elements.count, !stopStarting() else { return }
                let index = next
                next += 1
                group.addTask { (index, await body(elements[index])) }
            }
            for _ in 0..<max(1, limit) { addNext() }
            for await (index, result) in group {
                results[index] = result
                addNext()
            }
        }
        return results
    }
}
