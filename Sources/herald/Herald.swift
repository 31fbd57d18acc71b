import ArgumentParser
import Foundation
import HeraldCommandLine

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
            ServeCommand.self, MigrateCommand.self, TenantCommand.self, AppCommand.self, PlatformCommand.self,
            AnalyticsCommand.self, DevicesCommand.self, ImportCommand.self, WebhookCommand.self,
            BackupCommand.self, RestoreCommand.self,
        ])

    /// Runs the command with its configuration file (`--config`) and `HERALD_…_FILE` secrets
    /// applied: the file's options join the command line, its environment settings the
    /// process's environment, where neither already gives them (flags > environment > file).
    static func main() async {
        let resolved: ConfigFile.Resolved
        do {
            resolved = try ConfigFile.resolve(
                arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        } catch {
            exit(withError: error)
        }
        // Before any task or thread starts: the commands read these as they read the rest of the
        // environment, and setenv is only safe while nothing else runs.
        for (name, value) in resolved.environment { setenv(name, value, 1) }
        do {
            var command = try parseAsRoot(resolved.arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
