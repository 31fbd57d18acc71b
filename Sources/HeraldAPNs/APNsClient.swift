import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOSSL

/// What APNs said about one notification.
public enum APNsOutcome: Sendable, Equatable {
    /// 200: APNs accepted it for delivery.
    case accepted(apnsID: String)
    /// APNs refused it; `timestamp` (epoch ms) comes with 410, when the token stopped being valid.
    case rejected(status: Int, reason: APNsErrorReason, timestamp: Int64?)
}

/// Sends notifications to APNs over HTTP/2 and TLS (async-http-client), reusing its connections.
///
/// The client only reports outcomes; what to do about them (deactivate, retry, pause) is the
/// dispatcher's decision.
public final class APNsClient: Sendable {
    /// Apple's endpoints.
    public static func endpoint(for environment: APNsEnvironment) -> String {
        switch environment {
        case .production: "https://api.push.apple.com"
        case .sandbox: "https://api.sandbox.push.apple.com"
        }
    }

    private let httpClient: HTTPClient
    private let endpoint: String

    /// - Parameters:
    ///   - endpoint: Apple's for the environment, or a test server.
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test endpoint or a TLS proxy).
    ///   - clientCertificate: the .p12 for certificate-based auth.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    public init(
        endpoint: String, extraTrustedCAPEM: String? = nil, clientCertificate: APNsCertificateCredentials? = nil,
        connectTimeout: TimeAmount = .seconds(10)
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        if let extraTrustedCAPEM {
            let extra = try NIOSSLCertificate.fromPEMBytes(Array(extraTrustedCAPEM.utf8))
            tls.additionalTrustRoots = [.certificates(extra)]
        }
        if let clientCertificate {
            let bundle = try NIOSSLPKCS12Bundle(buffer: clientCertificate.pkcs12, passphrase: Array(clientCertificate.password.utf8))
            tls.certificateChain = bundle.certificateChain.map { .certificate($0) }
            tls.privateKey = .privateKey(bundle.privateKey)
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: connectTimeout, read: .seconds(30))
        self.httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
    }

    /// Sends one notification to one device.
    ///
    /// - Parameter bearer: the provider token for token-based auth; nil with a client certificate.
    public func send(
        _ notification: APNsNotification, deviceToken: String, topic: String, bearer: String?, apnsID: UUID = UUID()
    ) async throws -> APNsOutcome {
        var request = HTTPClientRequest(url: "\(endpoint)/3/device/\(deviceToken)")
        request.method = .POST
        request.headers.add(name: "apns-id", value: apnsID.uuidString.lowercased())
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: notification.pushType.rawValue)
        request.headers.add(name: "apns-priority", value: String(notification.priority))
        if let expiration = notification.expiration {
            request.headers.add(name: "apns-expiration", value: String(expiration))
        }
        if let collapseID = notification.collapseID {
            request.headers.add(name: "apns-collapse-id", value: collapseID)
        }
        if let bearer {
            request.headers.add(name: "authorization", value: "bearer \(bearer)")
        }
        request.body = .bytes(ByteBuffer(bytes: notification.payload))
        let response = try await httpClient.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        if status == 200 {
            return .accepted(apnsID: response.headers.first(name: "apns-id") ?? apnsID.uuidString.lowercased())
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        let reason = APNsErrorReason((json?["reason"] as? String) ?? "HTTP \(status)")
        let timestamp = (json?["timestamp"] as? NSNumber)?.int64Value
        return .rejected(status: status, reason: reason, timestamp: timestamp)
    }

    public func shutdown() async throws {
        try await httpClient.shutdown()
    }
}
