import Foundation
import Hummingbird
import HummingbirdTesting
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import Synchronization
import Testing
import VinylogueCore
import Web

/// The everyone, rediscover and album (with its life) pages under a short
/// load with Last.fm holding every answer back, or failing every request:
/// each answers within the server's deadline for Last.fm, with a sentence
/// saying what is missing, while Last.fm is still holding its answers (an
/// event, not a clock). `/healthz`, asked while a dozen pages wait for
/// Last.fm, answers before any of them (an order of events, not a time:
/// these tests share the process's two threads with every other test, so
/// a bound in seconds would measure the run, not the server).
@Suite struct NewPagesUnderFaultsTests {
    /// The server's deadline for Last.fm in these tests; pages may take a
    /// little longer than it on a loaded machine, never Last.fm's time.
    static let deadline = Duration.seconds(2)
    static let patience = Patience(nameLookup: .milliseconds(300), albumColours: .milliseconds(300),
                                                      lastFM: deadline, database: .seconds(2))
    static let album = "/u/offliner/album/Local%20Artist/Offline%20Album?week=2020-07-08"
    /// What a page says of a Last.fm that has not answered by the deadline.
    static let slow = "Last.fm is slow to answer right now"
    /// Each page asked this many times at once.
    static let copies = 4

    /// An archived user who played "Offline Album" ten times three years
    /// ago (so rediscover finds it), and a Last.fm user, on the list.
    static func prepare(_ harness: Harness) async throws {
        try await SQLiteScrobbleStore(database: harness.database).store(KeptAnswersTests.plays(10), of: KeptAnswersTests.user,
                                                                    origin: .lastFMExport)
        _ = try await harness.lists.add(KeptAnswersTests.user)
        _ = try await harness.lists.add(try Username("ybsc"))
    }

    struct Answer: Sendable {
        let path: String
        let status: HTTPResponse.Status
        let body: String
    }

    static func answer(_ client: any TestClientProtocol, _ path: String) async throws -> Answer {
        let page = try await client.getOnce(path)
        return Answer(path: path, status: page.status, body: page.body)
    }

    /// How many requests have been answered, counted from many tasks.
    final class AnsweredCount: Sendable {
        private let answered = Mutex(0)
        func add() { answered.withLock { $0 += 1 } }
        var count: Int { answered.withLock { $0 } }
    }

    /// Every new page `copies` times at once.
    static var paths: [String] { Array(repeating: ["/everyone?years_ago=3", "/u/offliner/rediscover", album], count: copies).flatMap { $0 } }

    static func load(_ client: any TestClientProtocol) async throws -> [Answer] {
        try await withThrowingTaskGroup(of: Answer.self) { group in
            for path in paths { group.addTask { try await answer(client, path) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// What every page must say, whatever Last.fm does: one of `lastFMSays`,
    /// the sentences of the failure (a failing Last.fm slowed down by a
    /// loaded machine is, by the deadline, a slow one).
    static func check(_ pages: [Answer], lastFMSays: [String]) throws {
        #expect(pages.count == copies * 3)
        for page in pages {
            #expect(page.status == .ok, "\(page.path): \(page.status)")
            switch page.path {
            case album:
                #expect(page.body.contains("In offliner’s listening"))
                #expect(page.body.contains(ArchivedAlbumWithoutLastFMTests.detailsNote))
                #expect(lastFMSays.contains { page.body.contains($0) }, "\(page.body)")
            case "/u/offliner/rediscover":
                #expect(page.body.containsInOrder(["Local Artist", "Offline Album", "10 plays"]))
            default:
                let cards = EveryoneTests().cards(page.body)
                #expect(try #require(cards["offliner"]).containsInOrder(["#1", "Offline Album", "10 plays"]))
                let ybsc = try #require(cards["ybsc"])
                #expect(ybsc.contains("role=\"alert\""))
                #expect(lastFMSays.contains { ybsc.contains($0) }, "\(ybsc)")
            }
        }
    }

    @Test(.timeLimit(.minutes(2))) func withLastFMHoldingEveryAnswerThePagesAnswerByTheDeadline() async throws {
        try await Harness.run(patience: Self.patience) { harness, client in
            try await Self.prepare(harness)
            await harness.fake.inject(.init(.held))
            try Self.check(try await Self.load(client), lastFMSays: [Self.slow])
            // Every page answered while Last.fm still held what they asked.
            #expect(await harness.fake.requests().contains { $0.method == "album.getinfo" && $0.answered == nil })
            #expect(await harness.fake.requests().contains { $0.method == "user.getweeklychartlist" && $0.answered == nil })
            await harness.fake.clearFaults()
            await harness.fake.releaseHeld()
            await harness.idle()
        }
    }

    /// Last.fm's 503 comes at once, long before a deadline of 10 s: the
    /// pages must say it is unavailable, not that it is slow (accepting
    /// "slow" here let a page that never read the 503 pass).
    @Test(.timeLimit(.minutes(2))) func withLastFMFailingThePagesSaySo() async throws {
        let patience = Patience(nameLookup: .milliseconds(300), albumColours: .milliseconds(300),
                                                   lastFM: .seconds(10), database: .seconds(2))
        try await Harness.run(patience: patience) { harness, client in
            try await Self.prepare(harness)
            await harness.fake.inject(.init(.httpStatus(503)))
            try Self.check(try await Self.load(client), lastFMSays: ["Last.fm is temporarily unavailable"])
        }
    }

    /// With a deadline of 10 s and Last.fm holding everything, a dozen
    /// pages wait for it; `/healthz`, asked then, answers while every page
    /// that needs Last.fm is still waiting (none has answered), and once
    /// Last.fm lets go, the pages are complete.
    @Test(.timeLimit(.minutes(2))) func healthAnswersWhilePagesWaitForLastFM() async throws {
        let patient = Patience(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10),
                                                  database: .seconds(10))
        try await Harness.run(patience: patient) { harness, client in
            try await Self.prepare(harness)
            await harness.fake.inject(.init(.held))
            let waitingAnswered = AnsweredCount()
            let pages = Task {
                try await withThrowingTaskGroup(of: Answer.self) { group in
                    for path in Self.paths {
                        group.addTask {
                            let answer = try await Self.answer(client, path)
                            if path != "/u/offliner/rediscover" { waitingAnswered.add() }
                            return answer
                        }
                    }
                    return try await group.reduce(into: [Answer]()) { $0.append($1) }
                }
            }
            // ybsc's chart list and the album's details, at least, are held.
            await harness.fake.untilHolding(2)
            let health = try await client.getOnce("/healthz")
            #expect(health.status == .ok)
            #expect(waitingAnswered.count == 0, "a page that waits for Last.fm answered before /healthz")
            await harness.fake.clearFaults()
            await harness.fake.releaseHeld()
            var answered = try await pages.value
            #expect(answered.count == Self.copies * 3)
            // A page whose 10 s ran out before the release (a loaded run:
            // the release waits for the held requests and /healthz) said
            // Last.fm was slow, as it should; reloaded, it joins what
            // arrived and is complete.
            for (index, page) in answered.enumerated() where page.body.contains(Self.slow) {
                let again = try await client.get(page.path)
                answered[index] = Answer(path: page.path, status: again.status, body: again.body)
            }
            for page in answered {
                #expect(page.status == .ok, "\(page.path): \(page.status)")
                #expect(!page.body.contains(Self.slow), "\(page.path)")
            }
            #expect(answered.contains { $0.path == Self.album && $0.body.contains("Offline Album is an album by Local Artist.") })
            #expect(answered.contains { $0.path.hasPrefix("/everyone") && $0.body.contains("Live at The Electric Ballroom") })
            await harness.idle()
        }
    }
}
