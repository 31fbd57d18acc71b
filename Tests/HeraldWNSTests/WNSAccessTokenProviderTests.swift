import HeraldCore
import HeraldHTTP
import Testing

@testable import HeraldWNS

/// WNS's part of the access-token provider: the request it makes. The provider's rules are
/// `AccessTokenProviderTests`' (HeraldHTTPTests).
@Suite struct WNSAccessTokenProviderTests {
    @Test func theRequestIsTheClientCredentialsForm() {
        let form = OAuthTokenEndpoint.body(
            WNSAccessTokenProvider.form(WNSCredentials(clientID: "ms-app://s-1-15-2-1", clientSecret: "a+b/c=d&e")))
        #expect(
            form
                == "grant_type=client_credentials&client_id=ms-app%3A%2F%2Fs-1-15-2-1&client_secret=a%2Bb%2Fc%3Dd%26e&scope=notify.windows.com"
        )
        #expect(OAuthTokenEndpoint.formEncoded("a.b_c-d~e f/é") == "a.b_c-d~e%20f%2F%C3%A9")
    }
}
