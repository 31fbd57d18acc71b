import ArgumentParser

/// `herald webhook add|list|remove|deliveries`: an application's webhook endpoints, through a
/// running server's admin API (docs/WEBHOOKS.md).
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Manage an application's webhook endpoints (through a running server's admin API).",
        subcommands: [Add.self, List.self, Remove.self, Deliveries.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an endpoint; prints its signing secret, shown this once.")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String
        @Argument(help: "The https:// URL events are POSTed to.") var endpoint: String
        @Option(
            name: .customLong("event"),
            help: "An event to receive (repeat for several): push.done, device.deactivated, platform.failing, platform.recovered.")
        var events: [String] = []

        func validate() throws {
            guard !events.isEmpty else { throw ValidationError("name at least one --event") }
        }

        func run() async throws {
            try await AdminClient(options: client).call(.POST, "/admin/v1/apps/\(app)/webhooks", body: ["url": endpoint, "events": events])
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an application's webhook endpoints.")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String

        func run() async throws {
            try await AdminClient(options: client).call(.GET, "/admin/v1/apps/\(app)/webhooks")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an endpoint and its queued deliveries.")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String
        @Argument(help: "The endpoint's uuid.") var uuid: String

        func run() async throws {
            try await AdminClient(options: client).call(.DELETE, "/admin/v1/apps/\(app)/webhooks/\(uuid)")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an endpoint's latest deliveries and their answers.")
        @OptionGroup var client: AdminClientOptions
        @Option(help: "The application's uuid.") var app: String
        @Argument(help: "The endpoint's uuid.") var uuid: String

        func run() async throws {
            try await AdminClient(options: client).call(.GET, "/admin/v1/apps/\(app)/webhooks/\(uuid)/deliveries")
        }
    }
}
