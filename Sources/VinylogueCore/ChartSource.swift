/// Where weekly charts come from: Last.fm, the local archive, or the demo.
///
/// The presenters depend on this protocol only; the composition root picks
/// the implementation.
public protocol ChartSource: Sendable {
    /// The weeks for which `user` has charts.
    func chartList(for user: Username) async throws(SourceError) -> ChartWeekList
    /// The chart of `kind` for `user` in `week`.
    func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart
    /// The charts of `kind` for `user` in each of `weeks`, in that order
    /// (one after another unless the source can do better, as the archive
    /// does in one query).
    func charts(for user: Username, kind: ChartKind, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart]
}

extension ChartSource {
    public func charts(for user: Username, kind: ChartKind, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart] {
        var charts: [WeeklyChart] = []
        for week in weeks {
            charts.append(try await chart(for: user, kind: kind, week: week))
        }
        return charts
    }
}

/// Where album details come from.
public protocol AlbumSource: Sendable {
    /// Details of one album; `user` adds the user's own play count.
    func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail
}

/// Where user profiles come from.
public protocol UserSource: Sendable {
    /// The profile of `user`, with Last.fm's canonical casing of the name.
    func user(_ user: Username) async throws(SourceError) -> User
    /// Everyone `user` follows on Last.fm.
    func friends(of user: Username) async throws(SourceError) -> [User]
}
