extension Int {
    /// A mock's fault counter ("the next N requests answer 503"): counts one down and says
    /// whether this request takes the fault.
    mutating func takeFault() -> Bool {
        guard self > 0 else { return false }
        self -= 1
        return true
    }
}
