extension RegistrationInput {
    /// `time_zone`, checked: an IANA zone Foundation knows (`Europe/Paris`), or empty to clear it.
    package func validatedTimeZone() throws(ValidationError) -> FieldChange<String> {
        if case .set(let zone) = timeZone, !PushSchedule.isTimeZone(zone) {
            throw ValidationError(message: "'\(zone)' is not an IANA time zone such as Europe/Paris", field: "time_zone")
        }
        return timeZone
    }
}

extension RegistrationInput {
    /// `quiet_time`, checked (`QuietTime.change`): errors name `quiet_time.start` and so on.
    package func validatedQuietTime() throws(ValidationError) -> FieldChange<QuietTime> {
        try QuietTime.change(quietTime, field: "quiet_time")
    }
}
