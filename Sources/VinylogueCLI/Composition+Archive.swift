import Archive
import Foundation
import LastFM
import VinylogueCore

extension Composition {
    /// Opens (creating when missing) the archive in the data directory.
    public func openArchive(dataDir: String?) throws(SourceError) -> ScrobbleStore {
        ScrobbleStore(database: try ArchiveDatabase(directory: dataDirectory(dataDir)))
    }

    /// The archive as a chart source; for the demo user, the generated
    /// history is stored first (once; later runs add only new weeks).
    func archiveChartSource(for user: Username, dataDir: String?) -> any ChartSource {
        do {
            let store = try openArchive(dataDir: dataDir)
            try fillDemo(for: user, in: store)
            return ArchiveChartSource(store: store)
        } catch {
            return UnavailableChartSource(error: error)
        }
    }

    /// Stores the demo history when `user` is the demo user.
    func fillDemo(for user: Username, in store: ScrobbleStore) throws(SourceError) {
        guard user == DemoHistory.username else { return }
        try GeneratedHistory(history: demo.history, store: store).fill(now: clock.now)
    }

    /// Last.fm's recent tracks, for `sync`.
    var recentTracksGateway: RecentTracksGateway {
        let client = lastFM
        return RecentTracksGateway { user, from, to, page, limit throws(SourceError) in
            try await client.recentTracks(of: user, from: from, to: to, page: page, limit: limit)
        }
    }
}

/// A chart source that could not be opened: every question gets the same
/// failure, which the presenter shows as a sentence and a next step.
struct UnavailableChartSource: ChartSource {
    let error: SourceError

    func chartList(for user: Username) async throws(SourceError) -> ChartWeekList { throw error }
    func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart { throw error }
}
