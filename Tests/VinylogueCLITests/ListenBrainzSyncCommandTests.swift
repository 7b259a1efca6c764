import Foundation
import ListenBrainzTestServer
import SQLiteStore
import Stores
import Testing
import TestSupport
import VinylogueCore

/// `vinylogue sync lb:NAME` end to end: the built binary against the local
/// ListenBrainz over real HTTP, then the archived chart.
@Suite struct ListenBrainzSyncCommandTests {
    /// dana's history: the 10 weeks before 2020-06-01 (the fake's "now"
    /// is the machine's, so her history is generated up to then only).
    static let end: Int64 = 1_590_969_600
    static let history = DemoHistory(seed: 41, start: end - 10 * 604_800)

    static func withFake(_ body: @Sendable (FakeListenBrainz, [String: String], URL) async throws -> Void) async throws {
        let fake = FakeListenBrainz(clock: .fixed(Date(timeIntervalSince1970: TimeInterval(end))))
        await fake.add(user: "Dana", history: history)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-lb-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try await FakeListenBrainzServer.withRunning(fake) { root in
            try await body(fake, ["LISTENBRAINZ_API_URL": root], data)
        }
    }

    @Test func syncsAListenBrainzUserAndChartsThemFromTheArchive() async throws {
        try await Self.withFake { fake, env, data in
            let run = try await vinylogue(["sync", "lb:dana", "--data-dir", data.path], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let stored = LastFMWeekCalendar.weeks(from: Self.history.firstWeek.from, closedBy: Self.end + LastFMWeekCalendar.weekLength)
                .flatMap { Self.history.scrobbles(in: $0) }.filter { $0.instant <= Self.end }
            // ListenBrainz's spelling of the name is the one archived.
            #expect(run.stdout.contains("Synced lb:Dana from ListenBrainz: \(Self.grouped(stored.count)) new listens from "), "\(run.stdout)")
            #expect(await fake.requests().allSatisfy { $0.endpoint == "listens" && $0.user?.lowercased() == "dana" })

            // The week of 2020-05-20, charted from the archive, equals a tally of the fake's listens.
            let week = LastFMWeekCalendar.week(containing: 1_589_932_800)
            let chart = try await vinylogue(["chart", "lb:dana", "--week", "2020-05-20", "--json", "--data-dir", data.path], environment: env)
            #expect(chart.status == 0, "\(chart.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(chart.stdout.utf8)) as? [String: Any])
            let entries = try #require(json["entries"] as? [[String: Any]])
            let tally = ScrobbleTally.chart(.album, user: try Username("lb:Dana"), week: week, scrobbles: stored)
            #expect(entries.count == tally.entries.count)
            #expect(entries.map { $0["name"] as? String } == tally.entries.map(\.name))
            #expect(entries.map { $0["plays"] as? Int } == tally.entries.map(\.plays))

            // `user` checks the name with ListenBrainz and prints its spelling.
            let user = try await vinylogue(["user", "LB:DANA"], environment: env)
            #expect(user.status == 0, "\(user.stderr)")
            #expect(user.stdout == "lb:Dana\n")

            // Again: nothing new, only the last two weeks asked for.
            let again = try await vinylogue(["sync", "lb:dana", "--data-dir", data.path], environment: env)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("Synced lb:Dana from ListenBrainz: 0 new listens"), "\(again.stdout)")
        }
    }

    /// `sync` runs as the same durable job a server's copy runs as: while
    /// another process holds dana's copy it refuses, saying so, and copies
    /// nothing; once the copy is free it runs, and the job records it done.
    @Test func aSyncWaitsForACopyAnotherProcessHolds() async throws {
        try await Self.withFake { fake, env, data in
            let copies = SQLiteHistoryCopyStore(try ArchiveDatabase(directory: data))
            let dana = try Username("lb:Dana")
            let held = try #require(try await copies.claim(dana, at: Date(), lease: 600))
            let refused = try await vinylogue(["sync", "lb:dana", "--data-dir", data.path], environment: env)
            #expect(refused.status == 3)
            #expect(refused.stderr.contains("lb:Dana's history is being copied by another process (a server, or another sync) right now."),
                    "\(refused.stderr)")
            // Nothing was copied: the archive has no listens of hers.
            let chart = try await vinylogue(["chart", "lb:dana", "--week", "2020-05-20", "--data-dir", data.path], environment: env)
            #expect(chart.status == 2, "\(chart.stdout)")
            #expect(try await copies.copy(of: dana)?.state == .copying)

            #expect(try await copies.finish(held, failure: "stopped by its worker", at: Date()))
            let run = try await vinylogue(["sync", "lb:dana", "--data-dir", data.path], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let copy = try #require(try await copies.copy(of: dana))
            #expect(copy.state == .done && copy.reason == nil)
            #expect(copy.pagesDone > 0)
            let stored = LastFMWeekCalendar.weeks(from: Self.history.firstWeek.from, closedBy: Self.end + LastFMWeekCalendar.weekLength)
                .flatMap { Self.history.scrobbles(in: $0) }.filter { $0.instant <= Self.end }
            #expect(copy.scrobbles == stored.count)
        }
    }

    @Test func anUnknownListenBrainzUserExits2AndStoresNothing() async throws {
        try await Self.withFake { _, env, data in
            let run = try await vinylogue(["sync", "lb:nobody", "--data-dir", data.path], environment: env)
            #expect(run.status == 2)
            #expect(run.stderr.contains("ListenBrainz has no user “nobody”. Check the spelling of the name after “lb:”."), "\(run.stderr)")
            let chart = try await vinylogue(["chart", "lb:nobody", "--data-dir", data.path], environment: env)
            #expect(chart.status == 2)
            #expect(chart.stderr.contains("Nothing is archived for “lb:nobody” yet. Run `vinylogue sync lb:nobody`"), "\(chart.stderr)")
        }
    }

    @Test func aListenBrainzThatKeepsFailingIsASentenceAndExit3() async throws {
        try await Self.withFake { fake, env, data in
            await fake.inject(.init(.httpStatus(502), endpoint: "listens"))
            let run = try await vinylogue(["sync", "lb:dana", "--data-dir", data.path], environment: env)
            #expect(run.status == 3)
            #expect(run.stderr.contains("ListenBrainz is temporarily unavailable (HTTP 502)."), "\(run.stderr)")
        }
    }

    @Test func anInvalidListenBrainzNameIsAUsageError() async throws {
        let run = try await vinylogue(["sync", "lb:../etc"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("ListenBrainz names after “lb:” contain only letters, digits, “_”, “-” and “.” (not first), not “.”."), "\(run.stderr)")
    }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return out
    }
}

/// `vinylogue playlist --to listenbrainz`: the built binary against the
/// local ListenBrainz over HTTP, with the user's token from the environment.
@Suite struct ListenBrainzPlaylistCommandTests {
    @Test func theWeekTwoYearsAgoBecomesAPrivatePlaylistOnListenBrainz() async throws {
        let dir = try TemporaryDirectory()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = .gmt
        let target = try #require(utc.date(byAdding: .year, value: -2, to: Date()))
        let week = LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970))
        let export = dir.url.appendingPathComponent("export.csv")
        try ("uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid\n"
            + "\(week.from + 3_600),x,Vetiver,,Tidewater,,Wonder Why,4a8b0e5c-1b3d-4c2e-9f10-2b3c4d5e6f70\n"
            + "\(week.from + 4_200),x,Vetiver,,Tidewater,,Rolling Sea,\n").write(to: export, atomically: true, encoding: .utf8)
        let data = dir.url.appendingPathComponent("data").path
        #expect(try await vinylogue(["import", export.path, "--user", "ana", "--data-dir", data]).status == 0)
        let fake = FakeListenBrainz(clock: .system, tokens: ["ana-lb-token": "ana_lb"])
        try await FakeListenBrainzServer.withRunning(fake) { root in
            let arguments = ["playlist", "ana", "--years-ago", "2", "--to", "listenbrainz", "--time-zone", "UTC", "--data-dir", data]
            let none = try await vinylogue(arguments, environment: ["LISTENBRAINZ_API_URL": root])
            #expect(none.status == 4 && none.stderr.contains("Set VINYLOGUE_LISTENBRAINZ_TOKEN"), "\(none.stderr)")
            let env = ["LISTENBRAINZ_API_URL": root, "VINYLOGUE_LISTENBRAINZ_TOKEN": "ana-lb-token"]
            let made = try await vinylogue(arguments, environment: env)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stdout.contains("Made “Vinylogue — this week, 2 years ago” on ListenBrainz for ana_lb (private): 1 track. https://listenbrainz.org/playlist/"),
                    "\(made.stdout)")
            #expect(made.stdout.contains("1 track without a MusicBrainz recording id left out."))
            let again = try await vinylogue(arguments, environment: env)
            #expect(again.stdout.contains("Replaced “Vinylogue — this week, 2 years ago”"), "\(again.stdout)")
            let kept = await fake.playlists()
            #expect(kept.count == 1 && kept.first?.recordings == ["4a8b0e5c-1b3d-4c2e-9f10-2b3c4d5e6f70"] && kept.first?.creator == "ana_lb")
            let wrong = try await vinylogue(arguments, environment: ["LISTENBRAINZ_API_URL": root, "VINYLOGUE_LISTENBRAINZ_TOKEN": "not it"])
            #expect(wrong.status != 0 && !wrong.stderr.contains("not it"), "\(wrong.stderr)")
            #expect(await fake.playlists().count == 1)
        }
    }
}
