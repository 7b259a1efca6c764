import Foundation
@testable import HTTPServing
import HummingbirdTesting
import LastFMTestServer
@testable import ListenIngest
import SQLiteStore
import Stores
import TestSupport
import Testing
import VinylogueCore
@testable import Web

/// A person's whole history brought into the archive by the server itself:
/// at sign-in for the account's own, at the first view for someone on a
/// list; with its progress on their pages and Settings, and afterwards
/// every page from the archive, with Last.fm unreachable.
@Suite struct HistoryCopyTests {
    /// Mika: a generated history from January 2022 to the harness's July
    /// 2023, paged by the fake's `user.getrecenttracks` as Last.fm pages.
    static let mikaHistory = DemoHistory(seed: 11, start: 1_641_124_800)
    static let mika = try! Username("Mika")

    /// The fake Last.fm with Mika in it.
    static func addMika(to harness: Harness) async {
        await harness.fake.add(user: "Mika", .generated(mikaHistory))
    }

    /// Nadia: over 50,000 generated scrobbles from November 2012 (about
    /// 270 pages of recent tracks), for the copy checked whole.
    static let nadiaHistory = DemoHistory(seed: 13, start: 1_352_073_600)
    static let nadia = try! Username("Nadia")

    /// Every week of `history` up to `now`, counted independently of
    /// the archive from the generated scrobbles: two plays of one track
    /// under a minute apart are one listen (the archive's documented rule).
    static func expectedWeeks(now: Date, history: DemoHistory = mikaHistory, user: Username = mika) -> [(ChartWeek, WeeklyChart)] {
        let end = Int64(now.timeIntervalSince1970)
        var weeks: [(ChartWeek, WeeklyChart)] = []
        var week = history.firstWeek
        var lastCounted: [String: Int64] = [:]
        while week.to <= end {
            var counted: [Scrobble] = []
            for scrobble in history.scrobbles(in: week).filter({ $0.instant <= end }).sorted(by: { $0.instant < $1.instant }) {
                let track = scrobble.artist.lowercased() + "\u{1F}" + scrobble.track.lowercased()
                if let last = lastCounted[track], scrobble.instant - last < 60 { continue }
                lastCounted[track] = scrobble.instant
                counted.append(scrobble)
            }
            weeks.append((week, ScrobbleTally.chart(.album, user: user, week: week, scrobbles: counted)))
            week = ChartWeek(from: week.to, to: week.to + LastFMWeekCalendar.weekLength)
        }
        return weeks
    }

    /// The scrobbles of `history` up to `now`.
    static func generated(_ history: DemoHistory, now: Date) -> Int {
        let end = Int64(now.timeIntervalSince1970)
        var kept = 0, week = history.firstWeek
        while week.from <= end {
            kept += history.scrobbles(in: week).filter { $0.instant <= end }.count
            week = ChartWeek(from: week.to, to: week.to + LastFMWeekCalendar.weekLength)
        }
        return kept
    }

    /// Checks that the archive holds exactly Mika's generated history:
    /// every week's album chart equals the independent count.
    static func expectArchiveHoldsMika(_ harness: Harness) async throws {
        try await expectArchiveHolds(mikaHistory, of: mika, harness, atLeast: 2_000)
    }

    /// Checks that the archive holds exactly `history` for `user`, at least
    /// `atLeast` scrobbles: every week's album chart equals the independent count.
    static func expectArchiveHolds(_ history: DemoHistory, of user: Username, _ harness: Harness, atLeast: Int) async throws {
        let archive = SQLiteScrobbleStore(database: harness.database)
        let expected = expectedWeeks(now: harness.clock.now, history: history, user: user)
        // Every generated scrobble counts but a repeat within a minute
        // (the rule's), which is set aside.
        let kept = history.listensThatCount(upTo: Int64(harness.clock.now.timeIntervalSince1970))
        #expect(try await archive.scrobbleCount(of: user) == kept)
        #expect(kept > atLeast, "a history of at least \(atLeast) scrobbles: \(kept)")
        let charts = try #require(try await archive.charts(.album, of: user, weeks: expected.map(\.0)))
        var mismatched: [ChartWeek] = []
        for ((week, want), got) in zip(expected, charts) where want.entries.map(\.plays) != got.entries.map(\.plays)
            || Set(want.entries.map { "\($0.artist)\u{1F}\($0.name)" }) != Set(got.entries.map { "\($0.artist)\u{1F}\($0.name)" }) {
            mismatched.append(week)
        }
        #expect(mismatched.isEmpty, "weeks whose chart differs: \(mismatched.prefix(5))")
    }

    @Test func signingInCopiesTheAccountsWholeHistoryWithItsProgressOnThePages() async throws {
        try await Harness.run(signIn: true, copies: true) { harness, client in
            await harness.fake.add(user: "Nadia", .generated(Self.nadiaHistory))
            // A page five from the oldest is held (the copy asks for the
            // oldest first), so the copy can be seen under way, its archive
            // still years behind.
            let pages = (Self.generated(Self.nadiaHistory, now: harness.clock.now) + 199) / 200
            await harness.fake.inject(.init(.held, method: "user.getrecenttracks", times: 1, parameters: ["page": String(pages - 5)]))
            let browser = try await SignInTests.signIn(client, harness, as: "nadia")
            await harness.fake.untilHolding(1)
            let during = try await SignInTests.page(client, "/u/Nadia", browser)
            #expect(during.status == .ok)
            let row = try await SQLiteHistoryCopyStore(harness.database).copy(of: Self.nadia)
            #expect(during.body.contains("Copying Nadia’s Last.fm history"), "\(String(describing: row))")
            #expect(during.body.contains("Until it is done, these charts come from Last.fm."))
            let settings = try await SignInTests.page(client, "/settings", browser)
            #expect(settings.body.contains("Your listening history"))
            #expect(settings.body.contains("Vinylogue keeps your whole Last.fm history in its own archive"), "\(settings.body)")
            #expect(settings.body.contains("Stop copying"))
            // Rediscover does not spend years of weekly charts on one page
            // (the chart page's warming of the year before may add one).
            await harness.fake.clearLog()
            let rediscover = try await SignInTests.page(client, "/u/Nadia/rediscover", browser)
            #expect(rediscover.status == .ok)
            #expect(rediscover.body.contains("will be ready when the copy of Nadia’s history is done"), "\(rediscover.body)")
            #expect(await harness.fake.requests().filter { $0.method == "user.getweeklyalbumchart" }.count <= 1)
            await harness.fake.releaseHeld()
            await harness.idle()

            try await Self.expectArchiveHolds(Self.nadiaHistory, of: Self.nadia, harness, atLeast: 50_000)
            let copy = try #require(try await SQLiteHistoryCopyStore(harness.database).copy(of: Self.nadia))
            #expect(copy.state == .done && copy.doneAt != nil && copy.scrobbles == copy.scrobblesTotal && copy.pagesDone == copy.pagesTotal)
            // Afterwards every page is the archive's, with Last.fm unreachable.
            await harness.fake.inject(.init(.httpStatus(503)))
            for path in ["/u/Nadia", "/u/Nadia?years_ago=3", "/u/Nadia/history", "/u/Nadia/rediscover"] {
                let page = try await SignInTests.page(client, path, browser)
                #expect(page.status == .ok, "\(path): \(page.body)")
                #expect(!page.body.contains("Copying Nadia’s"), "\(path)")
            }
            let after = try await SignInTests.page(client, "/settings", browser)
            #expect(after.body.contains("Your Last.fm history was copied on"), "\(after.body)")
        }
    }

    @Test func aFriendOnTheListIsCopiedAtTheirFirstViewAndAStrangerIsNot() async throws {
        try await Harness.run(copies: true) { harness, client in
            await Self.addMika(to: harness)
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "mika"], session: session).status == .seeOther)
            let first = try await client.get("/u/Mika")
            #expect(first.status == .ok)
            await harness.idle()
            try await Self.expectArchiveHoldsMika(harness)
            // Someone on nobody's list is charted from Last.fm and never copied.
            _ = try await client.get("/u/ybsc")
            await harness.idle()
            #expect(try await SQLiteHistoryCopyStore(harness.database).copy(of: try Username("ybsc")) == nil)
            await harness.fake.inject(.init(.httpStatus(503)))
            #expect(try await client.get("/u/Mika/rediscover").status == .ok)
        }
    }

    /// Someone whose archive already holds last week's listens (an import,
    /// a player) keeps their archive's charts while their first copy runs:
    /// Last.fm may not have those listens.
    @Test func anArchiveFilledOtherwiseIsChartedWhileTheFirstCopyRuns() async throws {
        try await Harness.run(copies: true) { harness, client in
            await Self.addMika(to: harness)
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "mika"], session: session).status == .seeOther)
            let lastWeek = Int64(harness.clock.now.timeIntervalSince1970) - 3 * 86_400
            let imported = (0..<6).map { n in
                Scrobble(instant: lastWeek + Int64(n) * 300, artist: "Sonic Youth", album: "Daydream Nation", track: "Track \(n)")
            }
            _ = try await SQLiteScrobbleStore(database: harness.database).store(imported, of: Self.mika, origin: .spotify)
            await harness.fake.inject(.init(.held, method: "user.getrecenttracks", times: 1, parameters: ["page": "2"]))
            _ = try await client.getOnce("/u/Mika?years_ago=2")
            await harness.fake.untilHolding(1)
            let day = WeekLabels(timeZone: .current).isoDay(Date(timeIntervalSince1970: TimeInterval(lastWeek)))
            let page = try await client.getOnce("/u/Mika/week/\(day)")
            #expect(page.status == .ok)
            #expect(page.body.contains("Daydream Nation"), "\(page.body)")
            #expect(page.body.contains("Copying Mika’s Last.fm history"))
            #expect(page.body.contains("earlier years may be missing"))
            await harness.fake.releaseHeld()
            await harness.idle()
            #expect(try await client.get("/u/Mika/week/\(day)").body.contains("Daydream Nation"))
        }
    }

    @Test func aPersonStopsTheirCopyOnSettingsAndItStaysStoppedUntilTheyGoOn() async throws {
        try await Harness.run(signIn: true, copies: true) { harness, client in
            await Self.addMika(to: harness)
            await harness.fake.inject(.init(.held, method: "user.getrecenttracks", times: 1, parameters: ["page": "2"]))
            let browser = try await SignInTests.signIn(client, harness, as: "mika")
            await harness.fake.untilHolding(1)
            let stop = try await client.post("/settings/history", ["copy": "stop"], session: browser.form)
            #expect(stop.status == .seeOther, "\(stop.body)")
            await harness.fake.releaseHeld()
            await harness.idle()
            let copies = SQLiteHistoryCopyStore(harness.database)
            #expect(try await copies.copy(of: Self.mika)?.state == .stopped)
            // A view does not start it again; the page is Last.fm's, without a note.
            let page = try await SignInTests.page(client, "/u/Mika", browser)
            #expect(page.status == .ok && !page.body.contains("Copying Mika’s"))
            await harness.idle()
            #expect(try await copies.copy(of: Self.mika)?.state == .stopped)
            let settings = try await SignInTests.page(client, "/settings?history=stopped", browser)
            #expect(settings.body.contains("The copy is stopped. What was copied is kept."))
            #expect(settings.body.contains("Go on copying"))
            // Going on finishes it, from where it stopped.
            let again = try await client.post("/settings/history", ["copy": "start"], session: browser.form)
            #expect(again.status == .seeOther)
            await harness.idle()
            try await Self.expectArchiveHoldsMika(harness)
            // Without the CSRF token nothing changes.
            let forged = try await client.post("/settings/history", ["copy": "stop"], session: browser.form, token: "forged")
            #expect(forged.status == .forbidden)
        }
    }

    /// A year's page needs the archive: the person themself, charted from
    /// Last.fm with what their copy stored deleted, is offered it there, a button away;
    /// anyone else is told why, with nothing to press.
    @Test func aPersonWithoutTheirCopyIsOfferedItOnTheirYearPage() async throws {
        try await Harness.run(signIn: true, copies: true) { harness, client in
            await Self.addMika(to: harness)
            await harness.fake.inject(.init(.held, method: "user.getrecenttracks", times: 1, parameters: ["page": "2"]))
            let browser = try await SignInTests.signIn(client, harness, as: "mika")
            await harness.fake.untilHolding(1)
            #expect(try await client.post("/settings/history", ["copy": "stop"], session: browser.form).status == .seeOther)
            await harness.fake.releaseHeld()
            await harness.idle()
            #expect(try await client.post("/settings/history", ["copy": "delete"], session: browser.form).status == .seeOther)

            let own = try await SignInTests.page(client, "/u/Mika/year/2022", browser)
            #expect(own.status == .ok)
            #expect(own.body.contains("A year’s page is counted from Vinylogue’s own copy of your Last.fm history, and it holds none yet."),
                    "\(own.body)")
            #expect(own.body.contains("<form method=\"post\" action=\"/settings/history\" class=\"copy-offer\">"))
            #expect(own.body.contains("Copy my Last.fm history"))
            #expect(!browser.csrf.token.isEmpty && own.body.contains("<input type=\"hidden\" name=\"csrf\" value=\"\(browser.csrf.token)\">"))
            // A visitor is told why, and offered nothing (the offer was not kept for them).
            let visitor = try await SignInTests.page(client, "/u/Mika/year/2022", nil)
            #expect(visitor.body.contains("own copy of Mika’s history, and it holds none yet. Once Mika signs in here"))
            #expect(!visitor.body.contains("copy-offer"))
            let json = try await client.execute(uri: "/api/u/Mika/year/2022", method: .get, headers: [.cookie: browser.cookie], body: nil)
            #expect(json.status == .conflict)
            #expect(String(buffer: json.body).contains("Start the copy in Settings."))

            // The offer's button starts the copy; once done, the page is the year's.
            #expect(try await client.post("/settings/history", ["copy": "start"], session: browser.form).status == .seeOther)
            await harness.idle()
            try await Self.expectArchiveHoldsMika(harness)
            let counted = try await SignInTests.page(client, "/u/Mika/year/2022", browser)
            #expect(counted.body.contains("Top albums") && !counted.body.contains("copy-offer"), "\(counted.body)")
        }
    }

    /// "Delete what was copied": the copy's listens go, a player's stay,
    /// and nothing starts the copy again until the person does.
    @Test func aPersonDeletesWhatWasCopiedAndKeepsWhatTheirPlayerSent() async throws {
        try await Harness.run(signIn: true, copies: true) { harness, client in
            await Self.addMika(to: harness)
            let browser = try await SignInTests.signIn(client, harness, as: "mika")
            await harness.idle()
            try await Self.expectArchiveHoldsMika(harness)
            let archive = SQLiteScrobbleStore(database: harness.database)
            let sent = Scrobble(instant: 1_688_700_000, artist: "Players Own", album: "Sent Here", track: "Not From Last.fm")
            _ = try await archive.store([sent], of: Self.mika, origin: .received)
            let settings = try await SignInTests.page(client, "/settings", browser)
            #expect(settings.body.contains("Delete what was copied from Last.fm"), "\(settings.body)")
            // Every year's page, kept as it was asked for before the deletion.
            let everyYear = try await SignInTests.page(client, "/api/u/Mika/history", browser)
            #expect(everyYear.status == .ok && everyYear.body.contains("\"plays\""), "\(everyYear.body)")
            func keptPagesServed() async throws -> Int {
                let health = try await SignInTests.page(client, "/healthz", nil)
                let json = try JSONSerialization.jsonObject(with: Data(health.body.utf8)) as? [String: Any]
                return try #require((json?["renderedPages"] as? [String: Any])?["hits"] as? Int)
            }
            _ = try await SignInTests.page(client, "/api/u/Mika/history", browser)
            let served = try await keptPagesServed()
            #expect(served >= 1, "asked again, the page is the kept one")

            let delete = try await client.post("/settings/history", ["copy": "delete"], session: browser.form)
            #expect(delete.status == .seeOther)
            let location = try #require(delete.headers[.location])
            #expect(location.hasPrefix("/settings?history=deleted-"))
            #expect(try await archive.scrobbles(of: Self.mika, from: 0, to: .max) == [sent])
            // The kept page is forgotten: asked again, it is made anew.
            _ = try await SignInTests.page(client, "/api/u/Mika/history", browser)
            #expect(try await keptPagesServed() == served, "the page kept from before the deletion was served")
            let told = try await SignInTests.page(client, location, browser)
            #expect(told.body.contains("What was copied is deleted ("), "\(told.body)")
            #expect(told.body.contains("Nothing of your Last.fm history is copied here"))
            #expect(!told.body.contains("Delete what was copied"))
            // A view does not start it again.
            _ = try await SignInTests.page(client, "/u/Mika", browser)
            await harness.idle()
            let copy = try await SQLiteHistoryCopyStore(harness.database).copy(of: Self.mika)
            #expect(copy?.state == .stopped && copy?.scrobbles == 0)
            #expect(try await archive.scrobbleCount(of: Self.mika) == 1)
        }
    }
}

/// The sentences a copy's progress is said in.
@Suite struct CopyProgressNoteTests {
    static let at = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aCopyUnderWaySaysItsFiguresAndTimeLeft() throws {
        let copy = HistoryCopy(user: try Username("rj"), state: .copying, pagesDone: 206, pagesTotal: 762, scrobbles: 41_200,
                               scrobblesTotal: 152_380, queuedAt: Self.at, updatedAt: Self.at)
        #expect(CopyProgressNote.sentence(copy, whose: "your", secondsLeft: 556 / 5 * 3)
            == "Copying your Last.fm history: 41,200 of 152,380 scrobbles (27%), about 6 minutes left.")
        #expect(CopyProgressNote.chartNote(copy, user: copy.user, secondsLeft: 30)
            == "Copying rj’s Last.fm history: 41,200 of 152,380 scrobbles (27%), less than a minute left. "
            + "Until it is done, these charts come from Last.fm.")
        #expect(CopyProgressNote.timeLeft(3 * 3600) == "about 3 hours left")
        #expect(CopyProgressNote.percent(1, of: 152_380) == "less than 1%")
    }

    @Test func aListenBrainzCopySaysWhatItHasSoFarAndAFinishedOneNothing() throws {
        var copy = HistoryCopy(user: try Username("lb:erin"), state: .copying, pagesDone: 3, scrobbles: 3_000,
                               queuedAt: Self.at, updatedAt: Self.at)
        #expect(CopyProgressNote.sentence(copy, whose: "lb:erin’s", secondsLeft: nil)
            == "Copying lb:erin’s ListenBrainz history: 3,000 listens so far.")
        copy.state = .queued
        copy.pagesDone = 0
        #expect(CopyProgressNote.sentence(copy, whose: "your", secondsLeft: nil)?.hasPrefix("Vinylogue is about to copy your ListenBrainz history") == true)
        copy.state = .done
        #expect(CopyProgressNote.sentence(copy, whose: "your", secondsLeft: nil) == nil)
    }
}
