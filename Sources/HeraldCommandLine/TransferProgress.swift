import Foundation

/// Progress of a long transfer, on standard error: a bar redrawn in place (count, rate, ETA)
/// when standard error is a terminal, else a plain line every five seconds, for logs.
package struct TransferProgress: Sendable {
    package let verb: String
    /// Bytes in all, when known (for the percentage and the ETA).
    package let total: Int64?
    /// Shows nothing (a benchmark measures the transfer).
    package let quiet: Bool
    private let interactive = isatty(STDERR_FILENO) == 1
    private let start = ContinuousClock.now
    private var lastShown = ContinuousClock.now
    private var bytes: Int64 = 0
    private var lines = 0

    package init(verb: String, total: Int64?, quiet: Bool = false) {
        self.verb = verb
        self.total = total
        self.quiet = quiet
    }

    package mutating func advance(bytes: Int, lines: Int) {
        self.bytes += Int64(bytes)
        self.lines += lines
        let now = ContinuousClock.now
        guard now - lastShown >= (interactive ? .milliseconds(200) : .seconds(5)) else { return }
        lastShown = now
        show(final: false)
    }

    package mutating func finish() {
        show(final: true)
    }

    private func show(final: Bool) {
        guard !quiet else { return }
        let duration = ContinuousClock.now - start
        let elapsed = max(0.001, Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        let rate = Double(lines) / elapsed
        var text = "\(verb) \(lines) devices, \(Int(rate))/s"
        if let total, total > 0 {
            let fraction = min(1, Double(bytes) / Double(total))
            let remaining = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
            text += String(format: ", %3.0f%%, ETA %.0fs", fraction * 100, remaining)
            if interactive {
                let width = 30
                let filled = Int(fraction * Double(width))
                text = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] " + text
            }
        }
        if final { text += String(format: " (%.1fs)", elapsed) }
        let line = interactive ? "\r\u{1B}[K" + text + (final ? "\n" : "") : text + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
