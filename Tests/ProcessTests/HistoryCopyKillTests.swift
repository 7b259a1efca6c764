import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import SQLiteStore
@testable import Stores

/// A server copying a person's Last.fm history, killed with SIGKILL at
/// random moments five times and started again each time: its worker takes
/// the copy over from the dead process and resumes it page by page, and the
/// archive ends holding every scrobble of the generated history once.
@Suite struct HistoryCopyKillTests {
    @Test func aServersCopyKilledFiveTimesResumesAndStoresEveryScrobbleOnce() async throws {
        let dir = try TemporaryDirectory()
        // The fake's clock stops in September 2020: listener519's history
        // (from 2016, generated) is some 18,000 scrobbles, 90 pages of 200.
        let fakeNow: Int64 = 1_600_000_000
        let (fake, root) = try KillTests.fakeServer("fake-lastfm", ["--port", "0", "--now", String(fakeNow)])
        defer { kill(fake.processIdentifier, SIGKILL); fake.waitUntilExit() }
        let person = try Username("listener519")
        let data = dir.url.appendingPathComponent("data")
        let database = try ArchiveDatabase(directory: data)
        let store = SQLiteScrobbleStore(database: database)
        let copies = SQLiteHistoryCopyStore(database)
        // Queued as a sign-in queues it; the server's worker claims it at start.
        _ = try await copies.queue(person, at: Date())

        @Sendable func serve() throws -> ChildProcess {
            try KillTests.serve(data: data, ["LASTFM_API_URL": root, "LASTFM_API_KEY": "test-key", "LASTFM_REQUESTS_PER_SECOND": "100"])
        }
        let seed = KillTests.seed()
        var rng = SplitMix64(seed: seed)
        var seen: [Int] = []
        for round in 0..<5 {
            let before = try await store.scrobbleCount(of: person)
            let delay: Duration? = round == 0 || rng.next() % 2 == 0 ? nil : .milliseconds(50 + Int(rng.next() % 300))
            let process = try await KillTests.launchAndStop({ try serve() }, afterNextCommit: { try KillTests.stored(store, of: person) }, in: data, delay: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try await store.scrobbleCount(of: person)
            seen.append(count)
            #expect(count >= before, "archived after each kill: \(seen), seed \(seed)")
        }
        #expect(try await copies.copy(of: person)?.state != .done || seen.last ?? 0 > 0, "seed \(seed)")

        // Started once more, the server finishes the copy.
        let last = try serve()
        defer { kill(last.processIdentifier, SIGKILL); last.waitUntilExit() }
        // Patience for progress, not for the whole copy: on a loaded machine
        // (the whole suite at once) its 90 pages take longer than 10 s, but
        // it never stands still for 10 s unless it is stuck.
        var deadline = ContinuousClock.now + .seconds(10)
        var archivedSoFar = try await store.scrobbleCount(of: person)
        while try await copies.copy(of: person)?.state != .done, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            let now = try await store.scrobbleCount(of: person)
            if now > archivedSoFar { (archivedSoFar, deadline) = (now, ContinuousClock.now + .seconds(10)) }
        }
        let copy = try #require(try await copies.copy(of: person))
        #expect(copy.state == .done, "\(copy), archived after each kill: \(seen), seed \(seed)")

        let start = 1_136_073_600 + Int64(519 % 520) * 604_800
        let history = DemoHistory(seed: 519, start: start)
        let expected = LastFMWeekCalendar.weeks(from: history.firstWeek.from, closedBy: fakeNow + LastFMWeekCalendar.weekLength)
            .flatMap { history.scrobbles(in: $0) }
            .filter { $0.instant <= fakeNow }
            .map { Scrobble(instant: $0.instant, artist: $0.artist, album: $0.album, track: $0.track) }
            .sorted { $0.instant < $1.instant }
        // Counted by the archive's documented rule, independently: two plays
        // of one track under a minute apart are one listen (the other is set
        // aside, not counted).
        var lastCounted: [String: Int64] = [:]
        let counted = expected.filter { scrobble in
            let track = scrobble.artist.lowercased() + "\u{1F}" + scrobble.track.lowercased()
            if let last = lastCounted[track], scrobble.instant - last < 60 { return false }
            lastCounted[track] = scrobble.instant
            return true
        }
        #expect(counted.count > 15_000)
        let archived = try await store.scrobbles(of: person, from: 0, to: .max)
        let missing = Set(counted).subtracting(archived), extra = Set(archived).subtracting(counted)
        #expect(archived.count == counted.count, "seed \(seed); missing \(Array(missing.prefix(3))), extra \(Array(extra.prefix(3)))")
        #expect(missing.isEmpty && extra.isEmpty, "seed \(seed)")
    }
}
