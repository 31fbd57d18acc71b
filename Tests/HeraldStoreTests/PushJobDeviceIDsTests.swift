import Testing

@testable import HeraldStore

/// A job's stored device ids are read byte by byte: the same ids as splitting the text at commas
/// and parsing each piece with `Int64.init`, whatever the text holds.
@Suite struct PushJobDeviceIDsTests {
    @Test(arguments: [
        "", "1", "1,2,3", "42,7,1000000", ",1,,2,", "9223372036854775807,1", "9223372036854775808,1",
        "-9223372036854775808", "-9223372036854775809", "+5,-5,-,+,5a,a5, 5,5 ", "0,00,007", ",", ",,,",
    ])
    func sameAsSplittingAndParsing(_ text: String) {
        #expect(PushRepository.deviceIDs(text) == text.split(separator: ",").compactMap { Int64($0) })
    }

    @Test func aThousandIDs() {
        let ids = (1...1000).map { Int64($0) * 7919 }
        #expect(PushRepository.deviceIDs(ids.map(String.init).joined(separator: ",")) == ids)
    }
}
