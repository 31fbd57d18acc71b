import ArgumentParser

/// `herald-dev`: the developer's tool beside `herald` — provider mocks and benchmarks, kept out of
/// the production binary so that it links no test code.
@main
struct HeraldDev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald-dev",
        abstract: "Herald's developer tool: protocol-faithful provider mocks and end-to-end benchmarks.",
        discussion: """
            `herald-dev mock apns|fcm|webpush|wns` runs a mock provider on this machine; `herald-dev bench …` measures
            the `herald` executable beside it against those mocks.
            """,
        subcommands: [MockCommand.self, BenchCommand.self])
}
