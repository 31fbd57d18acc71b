extension PushInput {
    /// `rate` on a push: at most this many devices a second.
    package struct Rate: Sendable, Equatable, Decodable {
        package var perSecond: Int64?

        enum CodingKeys: String, CodingKey {
            case perSecond = "per_second"
        }

        package init(perSecond: Int64?) {
            self.perSecond = perSecond
        }
    }
}

extension Limits {
    /// The furthest `scheduleIn` may reach: ten years, in seconds.
    package static let scheduleInSeconds: Int64 = 10 * 366 * 86_400
    /// The highest `rate.per_second`.
    package static let ratePerSecond: Int64 = 1_000_000
}

extension PushInput {
    /// Checks Herald's additions to the push: `scheduleLocal` (exclusive with `scheduleAt` and
    /// `scheduleIn`) and `rate`.
    func validatedExtras() throws(ValidationError) -> (localTime: LocalDateTime?, ratePerSecond: Int?) {
        if let scheduleAt, scheduleAt < 0 {
            throw ValidationError(message: "scheduleAt is epoch milliseconds", field: "scheduleAt")
        }
        if let scheduleIn, scheduleIn > Limits.scheduleInSeconds {
            throw ValidationError(message: "scheduleIn is a number of seconds, at most \(Limits.scheduleInSeconds)", field: "scheduleIn")
        }
        var localTime: LocalDateTime?
        if let scheduleLocal {
            if scheduleAt != nil || scheduleIn != nil {
                throw ValidationError(
                    code: "conflicting_fields", message: "give one of scheduleAt, scheduleIn or scheduleLocal", field: "scheduleLocal")
            }
            guard let parsed = LocalDateTime(scheduleLocal) else {
                throw ValidationError(
                    message: "scheduleLocal is a wall-clock time without a zone, YYYY-MM-DDTHH:MM[:SS]", field: "scheduleLocal")
            }
            localTime = parsed
        }
        var ratePerSecond: Int?
        if let rate {
            guard let perSecond = rate.perSecond, (1...Limits.ratePerSecond).contains(perSecond) else {
                throw ValidationError(
                    message: "rate.per_second is a whole number from 1 to \(Limits.ratePerSecond)", field: "rate.per_second")
            }
            ratePerSecond = Int(perSecond)
        }
        return (localTime, ratePerSecond)
    }
}
