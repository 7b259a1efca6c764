import Exports
import Foundation
import Imports
import Synchronization
import Testing
import TestSupport
import VinylogueCore
import ZIPFoundation
@testable import SQLiteStore
import Sync
@testable import Stores

/// A person's export (`PersonalExport`) imports back into a fresh archive
/// as the same history: every week's charts and every album's life are
/// identical, and no secret is in the file.
@Suite struct PersonalExportTests {
    static let alice = Username(validating: "alice")!

    /// Three years of generated listening, plus listens whose names need
    /// escaping, carry MusicBrainz ids or an album artist, or have no album.
    static func history() -> [Scrobble] {
        let demo = DemoHistory(seed: 31, start: 1_500_000_000)
        let weeks = LastFMWeekCalendar.weeks(from: demo.firstWeek.from, closedBy: demo.firstWeek.from + 156 * LastFMWeekCalendar.weekLength)
        return weeks.flatMap { demo.scrobbles(in: $0) } + [
            Scrobble(instant: 1_510_000_000, artist: "Sigur Rós", album: "( )", track: "Untitled #1 \"Vaka\""),
            Scrobble(instant: 1_510_000_300, artist: "Back\\slash", album: "", track: "Tab\there, new\nline, \u{1}"),
            Scrobble(instant: 1_510_000_600, artist: "Low", album: "Double Negative", track: "Quorum",
                     artistMBID: "a7bd2af2-5b2a-4a2c-a3c5-2b2d9d7e3c62", albumMBID: "b8c8e0c1-7e1a-4ad8-8f2c-7bde2d24c2a1",
                     trackMBID: "c1d2e3f4-0000-4000-8000-000000000001"),
            Scrobble(instant: 1_510_000_900, artist: "Pulp", album: "Now 50", track: "Disco 2000", albumArtist: "Various Artists",
                     releaseGroupMBID: "5e0e1e5a-3a0b-4e5c-8b1d-2c3d4e5f6a7b"),
        ]
    }

    @Test func anExportImportsBackAsTheSameChartsAndAlbumLives() async throws {
        let dir = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: dir.url.appendingPathComponent("source"))
        let store = SQLiteScrobbleStore(database: database)
        let scrobbles = Self.history()
        for batch in stride(from: 0, to: scrobbles.count, by: 5_000) {
            _ = try await store.store(Array(scrobbles[batch..<min(batch + 5_000, scrobbles.count)]), of: Self.alice, origin: .lastFMExport)
        }
        let lists = SQLiteListStore(database)
        _ = try await lists.addAll([Self.alice, try Username("RJ")])
        try await lists.save(Settings(filter: PlayCountFilter(threshold: 4), timeZoneIdentifier: "Europe/Berlin"))
        let outbox = SQLiteForwardingOutbox(database)
        try await outbox.setListenBrainz(token: "secret-listenbrainz-token", user: "alice-lb", for: .household, at: .now)
        try await SQLiteListenTokenStore(database).replaceToken(of: .household, digest: "secret-token-digest", at: .now)

        let export = PersonalExport(person: Self.alice, owner: .household, archive: store, list: lists, forwarding: outbox, clock: testClock)
        let bytes = Mutex([UInt8]())
        let pieces = Mutex(0)
        let summary = try await export.write { piece in
            bytes.withLock { $0 += piece }
            pieces.withLock { $0 += 1 }
        }
        let zipPath = dir.url.appendingPathComponent(export.fileName).path
        try Data(bytes.withLock { $0 }).write(to: URL(fileURLWithPath: zipPath))
        #expect(export.fileName == "vinylogue-alice-2026-11-06.zip")
        let stored = try await store.scrobbleCount(of: Self.alice)
        #expect(summary.listens == stored)
        #expect(summary.months > 30)
        // Streamed in many pieces, not made whole first.
        #expect(pieces.withLock { $0 } > summary.months)

        // What is in it, read by ZIPFoundation (the importer's reader).
        let archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .read)
        var members: [String: String] = [:]
        for entry in archive {
            var data = Data()
            _ = try archive.extract(entry) { data.append($0) }
            members[entry.path] = String(decoding: data, as: UTF8.self)
        }
        #expect(members["vinylogue/list.json"] == "[{\"name\":\"alice\",\"me\":true},{\"name\":\"RJ\",\"me\":false}]\n")
        #expect(members["vinylogue/settings.json"] == "{\"play_count_filter\":4,\"time_zone\":\"Europe/Berlin\"}\n")
        #expect(members["vinylogue/forwarding.json"] == "{\"to_lastfm\":false,\"to_listenbrainz\":true,\"listenbrainz_user\":\"alice-lb\"}\n")
        #expect(members["user.json"]?.contains("\"user_name\":\"alice\"") == true)
        #expect(members.keys.filter { $0.hasPrefix("listens/") }.count == summary.months)
        let everything = members.values.joined()
        #expect(!everything.contains("secret-listenbrainz-token") && !everything.contains("secret-token-digest"))
        // Every line is JSON a ListenBrainz reader takes.
        for (name, text) in members where name.hasPrefix("listens/") {
            for line in text.split(separator: "\n") {
                #expect(throws: Never.self) { _ = try JSONSerialization.jsonObject(with: Data(line.utf8)) }
            }
        }

        // Imported into a fresh archive: the same history.
        let fresh = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: dir.url.appendingPathComponent("fresh")))
        let imported = try ScrobbleImporter(store: fresh, clock: testClock).importFile(at: zipPath, for: Self.alice)
        #expect(imported.imported == stored)
        #expect(imported.duplicates == 0 && imported.rejectedCount == 0)
        #expect(imported.refused.isEmpty && imported.unrecognised.isEmpty)
        #expect(try await fresh.scrobbles(of: Self.alice, from: .min, to: .max) == store.scrobbles(of: Self.alice, from: .min, to: .max))
        let span = try #require(try await store.span(for: Self.alice))
        let weeks = LastFMWeekCalendar.weeks(from: span.lowerBound, closedBy: span.upperBound + LastFMWeekCalendar.weekLength)
        for kind in [ChartKind.album, .artist, .track] {
            #expect(try await fresh.charts(kind, of: Self.alice, weeks: weeks) == store.charts(kind, of: Self.alice, weeks: weeks), "\(kind)")
        }
        var albums = Set<[String]>()
        for s in scrobbles where !s.album.isEmpty { albums.insert([s.artistOfAlbum, s.album]) }
        #expect(try await fresh.albumWeeks(of: Self.alice, artist: "Various Artists", album: "Now 50")?.count == 1)
        for album in albums {
            let before = try await store.albumWeeks(of: Self.alice, artist: album[0], album: album[1])
            #expect(try await fresh.albumWeeks(of: Self.alice, artist: album[0], album: album[1]) == before, "\(album)")
        }
    }
}
