// MARK: A fast reading of the bodies the PCF SDKs send

extension RegistrationInput {
    /// Reads a registration body in the plain shape the PCF SDKs send (one flat object of string
    /// fields and a list of tags, without escapes) straight from its bytes; nil for anything
    /// else, which the caller then decodes with `JSONDecoder`, answering exactly as before.
    ///
    /// It is the import's scanner (`DeviceImportLine.scan`), whose registration fields are read
    /// as `RegistrationInput.init(from:)` reads them (`DeviceImportLineScanTests`,
    /// `RegistrationInputScanTests`); the keys only an import line has (`device_uuid`,
    /// `active`, …) are ignored, as the decoder ignores keys it does not know. A body it accepts
    /// holds no NUL character (it gives up on any control character and on any escape), so it
    /// needs no `requireStorable` check. Why: Foundation's `JSONDecoder` was the largest part
    /// of a registration's own CPU in a profile (docs/benchmarks-history.md).
    package static func scan(_ body: UnsafeRawBufferPointer) -> RegistrationInput? {
        DeviceImportLine.scan(body)?.registration
    }
}
