import HeraldCore
import Testing

struct HTTPTokenTests {
    @Test func tokenCharactersAreLettersDigitsAndRFC9110sSymbols() {
        let allowed = Set("abcxyzABCXYZ0189!#$%&'*+-.^_`|~".utf8)
        for byte in allowed { #expect(HTTPToken.isTokenCharacter(byte), "\(byte)") }
        for byte in UInt8.min...UInt8.max where !allowed.contains(byte) {
            let isLetterOrDigit =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            #expect(HTTPToken.isTokenCharacter(byte) == isLetterOrDigit, "\(byte)")
        }
        // Separators, space, controls, DEL and non-ASCII bytes are not.
        for byte in Array(" \"(),/:;<=>?@[\\]{}\t".utf8) + [0, 0x7f, 0x80, 0xff] {
            #expect(!HTTPToken.isTokenCharacter(byte), "\(byte)")
        }
    }
}
