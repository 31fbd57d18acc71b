import ArgumentParser

/// `herald-dev bench …`: end-to-end benchmarks against protocol-faithful mocks on this machine.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Measure Herald on this machine against its provider mocks.",
        subcommands: [FanoutBenchmark.self, AudienceBenchmark.self, AnalyticsBenchmark.self, ScheduleBenchmark.self, ImportBenchmark.self])
}
