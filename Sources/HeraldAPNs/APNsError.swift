import HeraldHTTP

/// Why APNs refused a notification: Apple's documented reasons, with `unknown` for the rest.
package struct APNsErrorReason: ProviderReason {
    private enum Base: Hashable, Sendable {
        case badCollapseID, badDeviceToken, badExpirationDate, badMessageID, badPriority, badTopic
        case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken
        case missingTopic, payloadEmpty, topicDisallowed, badCertificate, badCertificateEnvironment
        case expiredProviderToken, forbidden, invalidProviderToken, missingProviderToken, unrelatedKeyIDInToken
        case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge, tooManyProviderTokenUpdates
        case tooManyRequests, internalServerError, serviceUnavailable, shutdown
        case unknown(String)
    }

    private let base: Base
    /// Apple's text, as received (`Unregistered`, `TooManyRequests`, …).
    package let name: String

    /// Parses the `reason` of an APNs error body.
    package init(_ reason: String) {
        name = reason
        switch reason {
        case "BadCollapseId": base = .badCollapseID
        case "BadDeviceToken": base = .badDeviceToken
        case "BadExpirationDate": base = .badExpirationDate
        case "BadMessageId": base = .badMessageID
        case "BadPriority": base = .badPriority
        case "BadTopic": base = .badTopic
        case "DeviceTokenNotForTopic": base = .deviceTokenNotForTopic
        case "DuplicateHeaders": base = .duplicateHeaders
        case "IdleTimeout": base = .idleTimeout
        case "InvalidPushType": base = .invalidPushType
        case "MissingDeviceToken": base = .missingDeviceToken
        case "MissingTopic": base = .missingTopic
        case "PayloadEmpty": base = .payloadEmpty
        case "TopicDisallowed": base = .topicDisallowed
        case "BadCertificate": base = .badCertificate
        case "BadCertificateEnvironment": base = .badCertificateEnvironment
        case "ExpiredProviderToken": base = .expiredProviderToken
        case "Forbidden": base = .forbidden
        case "InvalidProviderToken": base = .invalidProviderToken
        case "MissingProviderToken": base = .missingProviderToken
        case "UnrelatedKeyIdInToken": base = .unrelatedKeyIDInToken
        case "BadPath": base = .badPath
        case "MethodNotAllowed": base = .methodNotAllowed
        case "ExpiredToken": base = .expiredToken
        case "Unregistered": base = .unregistered
        case "PayloadTooLarge": base = .payloadTooLarge
        case "TooManyProviderTokenUpdates": base = .tooManyProviderTokenUpdates
        case "TooManyRequests": base = .tooManyRequests
        case "InternalServerError": base = .internalServerError
        case "ServiceUnavailable": base = .serviceUnavailable
        case "Shutdown": base = .shutdown
        default: base = .unknown(reason)
        }
    }

    package static let badDeviceToken = APNsErrorReason("BadDeviceToken")
    package static let deviceTokenNotForTopic = APNsErrorReason("DeviceTokenNotForTopic")
    package static let unregistered = APNsErrorReason("Unregistered")
    package static let expiredToken = APNsErrorReason("ExpiredToken")
    package static let expiredProviderToken = APNsErrorReason("ExpiredProviderToken")
    package static let invalidProviderToken = APNsErrorReason("InvalidProviderToken")
    package static let missingProviderToken = APNsErrorReason("MissingProviderToken")
    package static let tooManyRequests = APNsErrorReason("TooManyRequests")
    package static let payloadTooLarge = APNsErrorReason("PayloadTooLarge")

    /// The device token is dead: deactivate the device.
    package var meansDeviceGone: Bool {
        switch base {
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken: true
        default: false
        }
    }

    /// The provider token or certificate was refused.
    package var meansCredentialsRejected: Bool {
        switch base {
        case .expiredProviderToken, .invalidProviderToken, .missingProviderToken, .unrelatedKeyIDInToken, .badCertificate,
            .badCertificateEnvironment, .forbidden:
            true
        default: false
        }
    }

    /// Worth sending again later.
    package var isRetryable: Bool {
        switch base {
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout, .tooManyProviderTokenUpdates: true
        default: false
        }
    }

    package var description: String { name }

    package static func == (lhs: APNsErrorReason, rhs: APNsErrorReason) -> Bool { lhs.base == rhs.base }

    package func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
