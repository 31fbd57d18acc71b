import Crypto
import Foundation
import HeraldCore

/// One provider mock that `herald-dev bench fanout` runs in its own process, in benchmark mode:
/// how to start it, what the server needs to reach it, and the credentials and device tokens it
/// accepts.
struct ProviderMock {
    let type: PlatformType
    let process: ChildProcess
    /// The mock's origin, `https://127.0.0.1:PORT`.
    let url: String
    /// The devices of this platform, and the notifications the mock waits for.
    let expected: Int
    /// Where the mock writes its arrival times.
    let arrivalsPath: String
    /// The CA of its TLS certificate.
    let caPEM: String
    /// What points `herald serve` at it.
    let serverEnvironment: [String: String]
    /// Android: the service account the mock issues tokens to.
    private let serviceAccountJSON: String?
    /// Web: the one subscription key pair every benchmark endpoint shares.
    private let webKeys: (p256dh: String, auth: String)?

    static let wnsClientID = "ms-app://s-1-15-2-0000000000-0000000000-0000000000-0000000000-0000000000-0000000000-0000000001"
    static let wnsClientSecret = "bench-client-secret"

    /// Starts the mock for `type` and waits until it listens.
    static func start(
        _ type: PlatformType, expecting expected: Int, directory: String, executable: String, threads: Int, apnsKeyPath: String,
        apnsKeyID: String
    ) async throws -> ProviderMock {
        let name = type.rawValue
        let caPath = "\(directory)/\(name)-ca.pem"
        let arrivalsPath = "\(directory)/\(name)-arrivals.bin"
        var arguments = ["mock"]
        switch type {
        case .ios:
            // A broadcast goes to production devices: no apns-unique-id in the answers. The mock
            // stands for Apple's machines: it skips the HTTP/2 field-syntax pass (its own cost,
            // not Herald's) but still checks every APNs header, token and payload.
            arguments += [
                "apns", "--p8", "\(apnsKeyID)=\(apnsKeyPath)", "--environment", "production", "--no-header-block-validation",
            ]
        case .android:
            arguments += ["fcm", "--write-service-account", directory + "/service-account.json", "--project", "herald-bench"]
        case .web:
            arguments += ["webpush", "--subscribers", directory + "/subscribers.jsonl", "--count", "1"]
        case .windows:
            arguments += ["wns", "--client-id", wnsClientID, "--client-secret", wnsClientSecret]
        }
        arguments += [
            "--port", "0", "--ca-file", caPath, "--threads", String(threads), "--expect", String(expected), "--arrivals", arrivalsPath,
        ]
        let process = try ChildProcess(
            name: "mock \(name)", executable: executable, arguments: arguments, logPath: "\(directory)/mock-\(name).log")
        do {
            let listening = try await process.waitForLine(containing: "listening on", timeout: .seconds(30))
            guard let url = listening.split(separator: " ").first(where: { $0.hasPrefix("https://") }).map(String.init) else {
                throw BenchmarkError("cannot read the \(name) mock's address from: \(listening)")
            }
            let caPEM = try String(contentsOfFile: caPath, encoding: .utf8)
            var environment: [String: String] = [:]
            var serviceAccountJSON: String?
            var webKeys: (String, String)?
            switch type {
            case .ios:
                environment["HERALD_APNS_ENDPOINT"] = url
            case .android:
                environment["HERALD_FCM_ENDPOINT"] = url
                serviceAccountJSON = try String(contentsOfFile: directory + "/service-account.json", encoding: .utf8)
            case .web:
                webKeys = try readSubscriber(directory + "/subscribers.jsonl")
            case .windows:
                environment["HERALD_WNS_TOKEN_ENDPOINT"] = url + "/accesstoken.srf"
                environment["HERALD_WNS_TEST_HOST"] = "127.0.0.1"
            }
            return ProviderMock(
                type: type, process: process, url: url, expected: expected, arrivalsPath: arrivalsPath, caPEM: caPEM,
                serverEnvironment: environment, serviceAccountJSON: serviceAccountJSON, webKeys: webKeys)
        } catch {
            await process.stop(grace: .seconds(2))
            throw error
        }
    }

    /// The public half of the subscription the web mock wrote.
    private static func readSubscriber(_ path: String) throws -> (String, String) {
        let line = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").first ?? ""
        let entry = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
        guard let raw = entry["private_key"].flatMap(Base64URL.decode), let auth = entry["auth"],
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: raw)
        else { throw BenchmarkError("cannot read the web mock's subscription from \(path)") }
        return (Base64URL.encode(Array(key.publicKey.x963Representation)), auth)
    }

    /// The platform's credentials, as the mock accepts them.
    func credentials(apnsKey: P256.Signing.PrivateKey, apnsKeyID: String, topic: String) throws -> PlatformCredentials {
        switch type {
        case .ios:
            return try Self.apnsCredentials(key: apnsKey, keyID: apnsKeyID, topic: topic)
        case .android:
            return try CredentialsInput(serviceAccount: JSONText(serviceAccountJSON ?? "")).validate(for: .android)
        case .web:
            return try CredentialsInput(subject: "mailto:bench@example.com").validate(for: .web)
        case .windows:
            return try CredentialsInput(clientID: Self.wnsClientID, clientSecret: Self.wnsClientSecret).validate(for: .windows)
        }
    }

    /// iOS token-auth credentials signed with `key` (what the mock APNs and the h2o sink take).
    static func apnsCredentials(key: P256.Signing.PrivateKey, keyID: String, topic: String) throws -> PlatformCredentials {
        try CredentialsInput(p8: key.pemRepresentation, keyID: keyID, teamID: "BENCHTEAM1", topic: topic).validate(for: .ios)
    }

    /// A random 32-byte APNs device token, hex.
    static func randomAPNsToken() -> String {
        Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    /// The registration token of device `index`, in the platform's form.
    func deviceToken(_ index: Int) -> String {
        switch type {
        case .ios:
            return Self.randomAPNsToken()
        case .android:
            return "bench" + Base64URL.encode((0..<105).map { _ in UInt8.random(in: 0...255) })
        case .web:
            let keys = webKeys ?? ("", "")
            return JSONValue.object([
                "endpoint": .string("\(url)/push/bench-\(index)"),
                "keys": .object(["p256dh": .string(keys.p256dh), "auth": .string(keys.auth)]),
            ]).jsonText
        case .windows:
            return "\(url)/w/?token=bench-\(index)"
        }
    }
}
