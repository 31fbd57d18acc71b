import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A Herald server on a fresh database, with a root admin token, for router and live tests.
struct ServerHarness: Sendable {
    let db: TestDatabase
    let adminToken: String

    var store: Store { db.store }

    /// Runs `body` against the router (or a live server with `.live`), closing the database afterwards.
    /// `observability`: the router's metrics registry and activity logs (the observability tests
    /// give their own to read them).
    static func run(
        _ backend: Backend, observability: Observability = Observability(), setup: TestingSetup = .router,
        logger: Logger = TestDatabase.logger, deviceImport: DeviceImportConfiguration = DeviceImportConfiguration(),
        _ body: @Sendable @escaping (ServerHarness, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await withTestDatabase(backend) { db async throws in
            _ = try await db.store.tenants.create(name: Bootstrap.defaultTenantName)
            let (_, token) = try await db.store.adminTokens.create(tenantID: nil, name: "root")
            let harness = ServerHarness(db: db, adminToken: token)
            let app = Application(
                router: buildRouter(store: db.store, observability: observability, deviceImport: deviceImport),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
            try await app.test(setup) { client in
                try await body(harness, client)
            }
        }
    }
}

// MARK: Request helpers

func basic(_ username: String, _ password: String, spaces: Int = 1) -> HTTPFields {
    let encoded = Data("\(username):\(password)".utf8).base64EncodedString()
    return [.authorization: "Basic" + String(repeating: " ", count: spaces) + encoded, .contentType: "application/json"]
}

func basic(_ fixture: Fixture, spaces: Int = 1) -> HTTPFields {
    basic(fixture.platform.id.uuidString.lowercased(), fixture.platformSecret, spaces: spaces)
}

func appAuth(_ fixture: Fixture) -> HTTPFields {
    basic(fixture.app.id.uuidString.lowercased(), fixture.apiKey)
}

func bearer(_ token: String) -> HTTPFields {
    [.authorization: "Bearer \(token)", .contentType: "application/json"]
}

func body(_ json: String) -> ByteBuffer {
    ByteBuffer(string: json)
}

extension TestResponse {
    /// The body as a JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView))
        guard let dictionary = object as? [String: Any] else {
            throw TestFailure(message: "not a JSON object: \(String(buffer: body))")
        }
        return dictionary
    }

    /// The `error` object of an error answer.
    func error() throws -> [String: Any] {
        guard let error = try json()["error"] as? [String: Any] else {
            throw TestFailure(message: "no error object: \(String(buffer: body))")
        }
        return error
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
