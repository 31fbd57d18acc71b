import HeraldCore
import HeraldStore

extension RegistrationController {
    /// The input with its `custom_user_id` checked and replaced by the plain id, when the
    /// platform's application verifies custom user ids; as it is otherwise, or when the id is
    /// absent or cleared (a device may always drop its id).
    func verifyingCustomUserID(_ input: RegistrationInput, platform: Platform) async throws -> RegistrationInput {
        guard case .set(let token) = input.customUserID,
            let app = try await store.applications.find(id: platform.applicationID), app.verifiesCustomUserID
        else { return input }
        guard let secret = try await store.platforms.signingSecret(id: platform.id) else {
            throw APIError.badRequest(
                "this platform's secret cannot be opened with the server's encryption key, so a signed custom_user_id "
                    + "cannot be checked: regenerate the platform secret (POST /admin/v1/platforms/PLATFORM_UUID/secret)",
                field: "custom_user_id", code: "platform_secret_unavailable")
        }
        var verified = input
        let customUserID = try CustomUserIDToken.verify(token, secret: secret)
        verified.customUserID = customUserID.isEmpty ? .clear : .set(customUserID)
        return verified
    }
}
