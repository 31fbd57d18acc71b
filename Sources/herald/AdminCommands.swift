import ArgumentParser
import Foundation

// MARK: Tenants

struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant", abstract: "Manage tenants (through a running server's admin API).",
        subcommands: [Create.self, List.self, Token.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant.")
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "The tenant's name.") var name: String

        func run() async throws {
            try await AdminClient(options: client).call(.POST, "/admin/v1/tenants", body: ["name": name])
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants.")
        @OptionGroup var client: AdminClientOptions

        func run() async throws {
            try await AdminClient(options: client).call(.GET, "/admin/v1/tenants")
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an admin token limited to one tenant.")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The tenant's id.") var tenant: String
        @Argument(help: "A name for the token.") var name: String

        func run() async throws {
            try await AdminClient(options: client).call(.POST, "/admin/v1/tenants/\(tenant)/tokens", body: ["name": name])
        }
    }
}

// MARK: Applications

struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Manage applications (through a running server's admin API).",
        subcommands: [Create.self, List.self, RegenerateKey.self, Delete.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an application; prints its api key once.")
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "The application's name.") var name: String
        @Option(help: "A description.") var description: String?
        @Option(help: "The tenant's id (default: the token's tenant, or 'default').") var tenant: String?
        @Option(
            name: .customLong("verify-custom-user-id"),
            help: "true (default): registrations must sign their custom_user_id with the platform secret; false: plain ids.")
        var verifyCustomUserID: Bool?
        @Option(help: "Keep the uuid the application has elsewhere (e.g. on Pivotal): the backends' credentials go on working.")
        var uuid: String?
        @Option(
            name: .customLong("api-key"), parsing: .unconditional,
            help: "Keep its api key (16-128 letters, digits, '-', '_', '.', '~'; stored hashed).")
        var apiKey: String?

        func run() async throws {
            var body: [String: Any] = ["name": name]
            body["description"] = description
            body["tenant_id"] = tenant
            body["verify_custom_user_id"] = verifyCustomUserID
            body["uuid"] = uuid
            body["api_key"] = apiKey
            try await AdminClient(options: client).call(.POST, "/admin/v1/apps", body: body)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List applications.")
        @OptionGroup var client: AdminClientOptions

        func run() async throws {
            try await AdminClient(options: client).call(.GET, "/admin/v1/apps")
        }
    }

    struct RegenerateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "regenerate-key", abstract: "Replace an application's api key (the old one stops working at once).")
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "The application's uuid.") var uuid: String

        func run() async throws {
            try await AdminClient(options: client).call(.POST, "/admin/v1/apps/\(uuid)/api_key")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an application that has no platforms.")
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "The application's uuid.") var uuid: String

        func run() async throws {
            try await AdminClient(options: client).call(.DELETE, "/admin/v1/apps/\(uuid)")
        }
    }
}

// MARK: Platforms

struct PlatformCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "platform", abstract: "Manage platforms (through a running server's admin API).",
        subcommands: [Add.self, List.self, RegenerateSecret.self, Delete.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a platform to an application; prints its uuid and secret (shown once).",
            discussion: """
                ios:     --p8 AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --topic com.example.app [--environment sandbox]
                         or --p12 cert.p12 --password … --topic com.example.app
                android: --service-account firebase-adminsdk.json
                web:     --subject mailto:ops@example.com [--vapid-private-key …]  (a key pair is generated if none is given)
                windows: --client-id ms-app://… --client-secret …
                Coming from Pivotal: --uuid and --secret keep the platform's identity, which shipped apps carry.
                """)
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "ios, android, web or windows.") var type: String
        @Option(help: "The application's uuid.") var app: String
        @Option(help: "A name (default: the type).") var name: String?
        @Option(help: "APNs signing key file (.p8).") var p8: String?
        @Option(name: .customLong("key-id"), help: "APNs key id.") var keyID: String?
        @Option(name: .customLong("team-id"), help: "Apple team id.") var teamID: String?
        @Option(help: "APNs certificate bundle (.p12).") var p12: String?
        @Option(help: "The .p12's password.") var password: String?
        @Option(help: "The app's bundle id (apns-topic).") var topic: String?
        @Option(help: "production or sandbox.") var environment: String?
        @Option(name: .customLong("service-account"), help: "Firebase service-account JSON file.") var serviceAccount: String?
        @Option(help: "VAPID contact (mailto: or https:).") var subject: String?
        @Option(name: .customLong("vapid-private-key"), help: "An existing VAPID private key (base64url, 32 bytes).") var vapidPrivateKey:
            String?
        @Option(name: .customLong("client-id"), help: "WNS package SID.") var clientID: String?
        @Option(name: .customLong("client-secret"), help: "WNS client secret.") var clientSecret: String?
        @Option(help: "iOS: this platform's APNs endpoint instead of Apple's (https://host[:port]).") var endpoint: String?
        @Option(name: .customLong("extra-ca"), help: "iOS: a PEM CA file to trust for --endpoint.") var extraCA: String?
        @Option(help: "Keep the uuid the platform has elsewhere (e.g. on Pivotal): shipped apps carry it.") var uuid: String?
        @Option(parsing: .unconditional, help: "Keep its secret (16-128 letters, digits, '-', '_', '.', '~'; stored hashed).") var secret:
            String?

        func run() async throws {
            var credentials: [String: Any] = [:]
            if let p8 { credentials["p8"] = String(decoding: try readFile(p8, option: "--p8"), as: UTF8.self) }
            if let p12 { credentials["p12"] = try readFile(p12, option: "--p12").base64EncodedString() }
            if let serviceAccount {
                credentials["service_account"] = String(decoding: try readFile(serviceAccount, option: "--service-account"), as: UTF8.self)
            }
            credentials["key_id"] = keyID
            credentials["team_id"] = teamID
            credentials["password"] = password
            credentials["topic"] = topic
            credentials["environment"] = environment
            credentials["subject"] = subject
            credentials["vapid_private_key"] = vapidPrivateKey
            credentials["client_id"] = clientID
            credentials["client_secret"] = clientSecret
            credentials["endpoint"] = endpoint
            if let extraCA { credentials["extra_ca_pem"] = String(decoding: try readFile(extraCA, option: "--extra-ca"), as: UTF8.self) }
            var body: [String: Any] = ["type": type]
            body["name"] = name
            body["uuid"] = uuid
            body["secret"] = secret
            if !credentials.isEmpty { body["credentials"] = credentials }
            try await AdminClient(options: client).call(.POST, "/admin/v1/apps/\(app)/platforms", body: body)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an application's platforms.")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String

        func run() async throws {
            try await AdminClient(options: client).call(.GET, "/admin/v1/apps/\(app)/platforms")
        }
    }

    struct RegenerateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "regenerate-secret", abstract: "Replace a platform's secret (the old one stops working at once).")
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "The platform's uuid.") var uuid: String

        func run() async throws {
            try await AdminClient(options: client).call(.POST, "/admin/v1/platforms/\(uuid)/secret")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a platform that has no devices.")
        @OptionGroup var client: AdminClientOptions
        @Argument(help: "The platform's uuid.") var uuid: String

        func run() async throws {
            try await AdminClient(options: client).call(.DELETE, "/admin/v1/platforms/\(uuid)")
        }
    }
}
