import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Options of the commands that call a running server's admin API.
struct AdminClientOptions: ParsableArguments {
    @Option(help: "The server's base URL.")
    var url: String = "http://127.0.0.1:8080"

    /// `.unconditional`: a token may start with `-` (tokens made before generation avoided it).
    @Option(parsing: .unconditional, help: "Admin token (env: HERALD_ADMIN_TOKEN; default: the one in <data-dir>/admin-token).")
    var token: String?

    @Option(name: .customLong("data-dir"), help: "Where to find the admin token the server generated.")
    var dataDirectory: String = "herald-data"

    func resolvedToken() throws -> String {
        if let token { return token }
        if let token = ProcessInfo.processInfo.environment["HERALD_ADMIN_TOKEN"], !token.isEmpty { return token }
        let path = dataDirectory + "/admin-token"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("no admin token: pass --token, set HERALD_ADMIN_TOKEN, or run where \(path) exists")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Calls the admin API and prints what it answers.
struct AdminClient {
    let options: AdminClientOptions

    /// Sends the request; prints the JSON answer, or the error and exits non-zero.
    func call(_ method: HTTPMethod, _ path: String, body: [String: Any]? = nil) async throws {
        var request = try self.request(method, path)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        try await printAnswer(response)
    }

    /// A request to the admin API with the token.
    func request(_ method: HTTPMethod, _ path: String) throws -> HTTPClientRequest {
        let token = try options.resolvedToken()
        var request = HTTPClientRequest(url: options.url.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        return request
    }

    /// Prints the JSON answer (pretty) or its text; exits non-zero unless it is a success.
    func printAnswer(_ response: HTTPClientResponse) async throws {
        let bytes = try await response.body.collect(upTo: 16 << 20)
        let data = Data(bytes.readableBytesView)
        if let object = try? JSONSerialization.jsonObject(with: data),
            let pretty = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        {
            print(String(decoding: pretty, as: UTF8.self))
        } else if !data.isEmpty {
            print(String(decoding: data, as: UTF8.self))
        }
        guard (200..<300).contains(Int(response.status.code)) else {
            throw ExitCode(1)
        }
    }
}

/// Reads a file named on the command line.
func readFile(_ path: String, option: String) throws -> Data {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw ValidationError("\(option): cannot read \(path)")
    }
    return data
}
