/// No provider token could be had for a request.
package struct APNsProviderTokenError: Error, CustomStringConvertible {
    private enum Reason {
        /// The .p8 key did not sign: the credentials are unusable.
        case signing
        /// The shared store failed (the database is unreachable): worth trying again.
        case store
    }

    private let reason: Reason
    /// What failed, without the token (none was had).
    package let description: String

    static func signingFailed(_ error: any Error) -> APNsProviderTokenError {
        APNsProviderTokenError(reason: .signing, description: "the provider token could not be signed: \(error)")
    }

    static func storeFailed(_ error: any Error) -> APNsProviderTokenError {
        APNsProviderTokenError(reason: .store, description: "the shared provider token could not be read or stored: \(error)")
    }

    /// The credentials cannot sign a token: retrying will not help.
    package var meansCredentialsUnusable: Bool { reason == .signing }
}
