import Foundation
import HTTPTypes
import Testing

@testable import HeraldServer

@Suite struct RequestCredentialsTests {
    private func headers(_ authorization: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.authorization] = authorization
        return fields
    }

    private func basic(_ credentials: String) -> String {
        Data(credentials.utf8).base64EncodedString()
    }

    /// The scheme in any case, any run of blanks around the token (the PCF SDKs send two spaces).
    @Test(arguments: ["Basic %@", "basic %@", "BASIC %@", "Basic  %@", "\tBasic\t%@ ", " bAsIc %@\t"])
    func basicIsParsedLeniently(_ format: String) {
        let value = format.replacingOccurrences(of: "%@", with: basic("0a1b:s3cr:et"))
        let credentials = RequestCredentials.basic(headers(value))
        #expect(credentials?.username == "0a1b")
        // Only the first colon separates: a password may hold more.
        #expect(credentials?.password == "s3cr:et")
    }

    @Test(arguments: [
        "", "Basic", "Basic ", "Bearer %@", "Basics %@", "Basic %@ extra", "Basic not*base64", "Basic %@x",
        "Bas ic %@",
    ])
    func malformedBasicIsRefused(_ format: String) {
        let value = format.replacingOccurrences(of: "%@", with: basic("user:password"))
        #expect(RequestCredentials.basic(headers(value)) == nil)
    }

    @Test func basicWithoutColonOrValidUTF8IsRefused() {
        #expect(RequestCredentials.basic(headers("Basic " + basic("no-colon"))) == nil)
        let invalid = Data([0x75, 0x3a, 0xff, 0xfe]).base64EncodedString()
        #expect(RequestCredentials.basic(headers("Basic " + invalid)) == nil)
        #expect(RequestCredentials.basic(HTTPFields()) == nil)
    }

    @Test func emptyUsernameAndPasswordAreKept() {
        let credentials = RequestCredentials.basic(headers("Basic " + basic(":")))
        #expect(credentials?.username == "")
        #expect(credentials?.password == "")
    }

    /// Two `Authorization` headers are refused, as their joined value ("Basic a, Basic b") was;
    /// the header name matches in any case.
    @Test func twoAuthorizationHeadersAreRefused() {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .authorization, value: "Basic " + basic("user:password")))
        #expect(RequestCredentials.basic(fields)?.username == "user")
        fields.append(HTTPField(name: .authorization, value: "Basic " + basic("other:password")))
        #expect(RequestCredentials.basic(fields) == nil)
        #expect(RequestCredentials.bearer(fields) == nil)
        var lowerCase = HTTPFields()
        lowerCase.append(HTTPField(name: HTTPField.Name("authorization")!, value: "Bearer abc"))
        #expect(RequestCredentials.bearer(lowerCase) == "abc")
    }

    @Test func bearer() {
        #expect(RequestCredentials.bearer(headers("Bearer abc.def")) == "abc.def")
        #expect(RequestCredentials.bearer(headers("bearer  abc ")) == "abc")
        #expect(RequestCredentials.bearer(headers("Bearer a b")) == nil)
        #expect(RequestCredentials.bearer(headers("Basic abc")) == nil)
        #expect(RequestCredentials.bearer(headers("Bearer")) == nil)
    }
}
