import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

extension PostgresScrobbleStore {
    public func albumsCharted(of user: Username, in weeks: [ChartWeek], lifeOf: Set<ChartWeek>) async throws(SourceError) -> [ChartedAlbum]? {
        try await reading(user) { id, connection, logger in
            guard let id else { return nil }
            return try await Self.albumsCharted(userID: id, in: weeks, lifeOf: lifeOf, connection, logger)
        }
    }

    /// The album rows of `weeks`, those of `lifeOf` with their album's
    /// first and last week, in one statement (the same question as
    /// SQLite's, `SQLiteAlbumsCharted.swift`).
    static func albumsCharted(userID: Int64, in weeks: [ChartWeek], lifeOf: Set<ChartWeek>, _ connection: PostgresConnection,
                              _ logger: Logger) async throws -> [ChartedAlbum] {
        let starts = Set(weeks.map(\.from)).union(lifeOf.map(\.from)).sorted()
        guard !starts.isEmpty else { return [] }
        let lives = lifeOf.map(\.from).sorted()
        var found: [ChartedAlbum] = []
        for try await (week, artist, name, plays, mbid, key, first, last) in try await connection.query("""
            SELECT c.week, c.artist, c.name, c.plays, c.mbid, c.album_key,
                CASE WHEN c.week = ANY(\(lives)::bigint[]) THEN
                    (SELECT min(f.week) FROM weekly_chart f WHERE f.user_id = c.user_id AND f.album_key = c.album_key) END,
                CASE WHEN c.week = ANY(\(lives)::bigint[]) THEN
                    (SELECT max(f.week) FROM weekly_chart f WHERE f.user_id = c.user_id AND f.album_key = c.album_key) END
            FROM weekly_chart c
            WHERE c.user_id = \(userID) AND c.week = ANY(\(starts)::bigint[]) AND c.kind = 0 AND c.album_key IS NOT NULL
            ORDER BY c.week, c.rank
            """, logger: logger).decode((Int64, String, String, Int64, String?, String, Int64?, Int64?).self) {
            found.append(ChartedAlbum(week: LastFMWeekCalendar.week(containing: week), artist: artist, name: name, plays: Int(plays), mbid: mbid,
                                      key: key, firstWeek: first.map(LastFMWeekCalendar.week(containing:)),
                                      lastWeek: last.map(LastFMWeekCalendar.week(containing:))))
        }
        return found
    }
}
