import SQLiteStore
import Stores
import Sync
import Imports
import ArgumentParser
import Foundation
import Logging
import PostgresStore
import VinylogueCore

/// The PostgreSQL half of `vinylogue bench --database`: the generated
/// export imported into a PostgreSQL archive under a user of its own
/// (deleted afterwards), then every week's chart and the every-year query,
/// timed as the server awaits them (each a round trip to the database).
struct PostgresBench {
    let url: String
    let csv: String
    let end: Int64

    func run() async throws {
        do {
            try await PostgresDatabase.with(url: url) { database in
                try await database.migrate()
                let user = try Username("bench-\(UInt16.random(in: 0...UInt16.max))")
                let logger = Logger(label: "vinylogue.bench")
                let remove: @Sendable () async throws -> Void = { try await PostgresScrobbleStore(database).forget(user) }
                // Leave nothing behind, however the run ends.
                do { try await measure(PostgresScrobbleStore(database), user: user) } catch {
                    try? await remove()
                    throw error
                }
                try await remove()
            }
        } catch let problem as PostgresURLProblem {
            throw CommandFailure("\(problem) Check --database.", exitCode: .configuration)
        }
    }

    private func measure(_ store: PostgresScrobbleStore, user: Username) async throws {
        let clock = ContinuousClock()
        let importer = ScrobbleImporter(store: store, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(end))))
        let csv = self.csv
        let start = clock.now
        let summary = try await DedicatedThread.run(named: "vinylogue.import") { try importer.importFile(at: csv, for: user) }
        let seconds = BenchCommand.seconds(clock.now - start)
        print("Import: \(grouped(summary.imported)) scrobbles (\(grouped(summary.duplicates)) duplicates) in \(BenchCommand.format(seconds, 2)) s, "
            + "\(grouped(Int(Double(summary.imported + summary.duplicates) / seconds))) scrobbles/s")

        let source = ArchiveChartSource(store: store)
        let weeks = try await source.chartList(for: user).weeks
        try await BenchCommand.benchReads(source, users: [user], weeks: weeks, now: Date(timeIntervalSince1970: TimeInterval(end)))
        try await BenchCommand.benchRefolding(store, user: user, weeks: weeks, now: Date(timeIntervalSince1970: TimeInterval(end)))
    }
}
