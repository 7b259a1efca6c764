import Foundation
import PostgresStore
import Testing
import TestSupport
import VinylogueCore
@testable import Stores

/// docs/DEPLOY.md's PostgreSQL backup: `pg_dump --format=custom` of a
/// database in use, restored with `pg_restore --no-owner` into a new one,
/// which an instance then opens (its migrations find nothing to do) and
/// serves as it was.
@Suite struct PostgresBackupTests {
    @Test func aDumpRestoredIntoANewDatabaseServesTheSameCharts() async throws {
        let server = try TestCluster.url() + "?sslmode=disable"
        let dir = try TemporaryDirectory()
        let dump = dir.url.appendingPathComponent("vinylogue.dump")
        let rj = try Username("RJ")
        let history = DemoHistory(seed: 5, start: 1_600_000_000)
        let weeks = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: history.firstWeek.from + 30 * LastFMWeekCalendar.weekLength)
        let scrobbles = weeks.flatMap { history.scrobbles(in: $0) }

        // An album kept apart, one joined, two spellings tied by release.
        let release = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29"
        let tied = [Scrobble(instant: weeks[1].from + 60, artist: "Radiohead", album: "OK Computer", track: "Airbag", albumMBID: release),
                    Scrobble(instant: weeks[1].from + 360, artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017", track: "Lucky", albumMBID: release)]
        @Sendable func state(_ database: PostgresStore.PostgresDatabase) async throws -> (Int, [String], [WeeklyChart]?, [WeeklyChart]?) {
            let archive = PostgresScrobbleStore(database)
            return (try await archive.scrobbleCount(of: rj), try await PostgresListStore(database).users().map(\.name),
                    try await archive.charts(.album, of: rj, weeks: weeks), try await archive.charts(.artist, of: rj, weeks: weeks))
        }
        @Sendable func albums(_ database: PostgresStore.PostgresDatabase) async throws -> (AlbumFolding, [AlbumChoice]) {
            let archive = PostgresScrobbleStore(database)
            return (try await archive.albumFolding(of: rj), try await archive.albumChoices(of: rj))
        }
        let (kept, madeAt) = (scrobbles[0], Date(timeIntervalSince1970: 1_790_000_000))
        let backedUp = try await PostgresStore.PostgresDatabase.withTemporaryDatabase(server: server) { url in
            let before = try await PostgresStore.PostgresDatabase.with(url: url) { database in
                let archive = PostgresScrobbleStore(database)
                _ = try await archive.store(scrobbles + tied, of: rj, origin: .lastFMExport)
                #expect(try await archive.changeAlbums(.keepApart(artist: kept.artist, album: kept.album), of: rj, at: madeAt))
                #expect(try await archive.changeAlbums(.join(artist: "Radiohead", album: "OK Computer", toArtist: kept.artist, toAlbum: kept.album),
                                                       of: rj, at: madeAt.addingTimeInterval(1)))
                while try await archive.countAgain(rj, under: nil, at: madeAt) {}
                _ = try await PostgresListStore(database).addAll([rj, try Username("ybsc")])
                let made = try await albums(database)
                #expect(made.0.sameRelease.count == 1)
                #expect(made.1.count == 2)
                return (try await state(database), made)
            }
            _ = try await TestCluster.run("pg_dump", ["--format=custom", "--file=\(dump.path)", url])
            return before
        }
        let (before, albumsBefore) = backedUp
        #expect(before.0 == scrobbles.count + tied.count)
        try await PostgresStore.PostgresDatabase.withTemporaryDatabase(server: server) { url in
            _ = try await TestCluster.run("pg_restore", ["--no-owner", "--dbname=\(url)", dump.path])
            try await PostgresStore.PostgresDatabase.with(url: url) { database in
                let after = try await state(database)
                #expect(after.0 == before.0)
                #expect(after.1 == before.1)
                #expect(after.2 == before.2)
                #expect(after.3 == before.3)
                let albumsAfter = try await albums(database)
                #expect(albumsAfter.0 == albumsBefore.0)
                #expect(albumsAfter.1 == albumsBefore.1)
                // It takes writes as before: a new listen is kept and charted.
                let listen = Scrobble(instant: weeks[0].from + 1, artist: "Low", album: "HEY WHAT", track: "White Horses")
                #expect(try await PostgresScrobbleStore(database).store([listen], of: rj, origin: .received).inserted == 1)
            }
        }
    }
}
