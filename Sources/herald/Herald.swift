import ArgumentParser

/// The `herald` command: the server, its database and its admin tasks.
@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "A self-hosted push notification service (APNs, FCM, Web Push, WNS), compatible with the Pivotal Push API.",
        discussion: """
            Start with `herald serve`: it creates ./herald-data/ (SQLite database, encryption key, admin token),
            listens on 127.0.0.1:8080 and prints the admin token on its first start. Then create an application
            and a platform with `herald app create` and `herald platform add`, and register devices at /v1/registration.
            """,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, TenantCommand.self, AppCommand.self, PlatformCommand.self, MockCommand.self,
            AnalyticsCommand.self, BenchCommand.self, DevicesCommand.self, ImportCommand.self, WebhookCommand.self,
        ])
}
