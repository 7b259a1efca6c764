import Foundation

/// Serves the built-in demo history as a chart, album and user source, with
/// no network. Only the user `demo` exists here.
public struct DemoChartSource: ChartSource, UserSource, AlbumSource {
    public let history: DemoHistory
    let clock: WallClock

    public init(history: DemoHistory = DemoHistory(), clock: WallClock) {
        self.history = history
        self.clock = clock
    }

    func requireDemo(_ user: Username) throws(SourceError) {
        guard user == DemoHistory.username else { throw .notFound(what: "The user “\(user)”") }
    }

    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        try requireDemo(user)
        return history.chartList(now: Int64(clock.now.timeIntervalSince1970))
    }

    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        try requireDemo(user)
        return ScrobbleTally.chart(kind, user: DemoHistory.username, week: week, scrobbles: history.scrobbles(in: week))
    }

    public func user(_ user: Username) async throws(SourceError) -> User {
        try requireDemo(user)
        return User(name: DemoHistory.username, realName: "Demo Listener", registered: history.firstWeek.fromDate, playCount: 0)
    }

    public func friends(of user: Username) async throws(SourceError) -> [User] {
        try requireDemo(user)
        return []
    }

    public func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail {
        guard let album = history.catalog.albums.first(where: {
            $0.artist.lowercased() == artist.lowercased() && $0.name.lowercased() == name.lowercased()
        }) else { throw .notFound(what: "The album “\(name)” by \(artist)") }
        return AlbumDetail(
            artist: album.artist, name: album.name, mbid: nil, url: nil, images: [:],
            summary: WikiText(paragraphs: [[.text("\(album.name) is an album by \(album.artist), generated for Vinylogue's demo.")]]),
            listeners: 0, playCount: 0, userPlayCount: nil, tags: ["demo"],
            tracks: album.tracks.enumerated().map { AlbumDetail.Track(rank: $0.offset + 1, name: $0.element, duration: nil) })
    }
}
