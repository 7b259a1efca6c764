import Foundation
@testable import HTTPServing
import Hummingbird
@testable import ListenIngest
import PostgresStore
import SQLiteStore
import Stores
import Sync
import TestSupport
import Testing
import VinylogueCore
@testable import Web

/// In a fleet, what a player sends to one instance shows on the pages
/// every instance makes: the announcement goes through PostgreSQL's NOTIFY,
/// and each instance's `FleetNoticeListener` applies it.
@Suite(.timeLimit(.minutes(1))) struct FleetNoticesTests {
    @Test func oneInstancesNoticesDropAnothersPagesOfThatPersonAndShowWhatTheyPlay() async throws {
        let cluster = try TestCluster.url()
        try await PostgresDatabase.withTemporaryDatabase(server: cluster + "?sslmode=disable") { url in
            try await PostgresDatabase.with(url: url) { here in
                try await PostgresDatabase.with(url: url) { there in
                    // The other instance's kept pages.
                    let pages = RenderedPages(clock: .fixed(july2023)), cards = RenderedPages(clock: .fixed(july2023))
                    let body = ByteBuffer(string: "page")
                    pages.keep("chart|RJ|y1|album", status: .ok, body: body)
                    pages.keep("api|chart|ybsc|y1|album", status: .ok, body: body)
                    cards.keep("card|RJ|y1", status: .ok, body: body)
                    let nowPlaying = NowPlaying(clock: .fixed(july2023))
                    let changes = ListeningChanges(notices: nil)
                    changes.follow(KeptViews(pages: pages, cards: cards, drawn: nil))
                    let listener = FleetNoticeListener(notices: PostgresFleetNotices(there), changes: changes, nowPlaying: nowPlaying)
                    let announcer = PostgresFleetNotices(here)
                    let rj = try Username("RJ")
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await listener.run() }
                        // The listener listens a moment after it starts; a
                        // notice sent before that is lost (a hint, not data),
                        // so RJ's change is said again until it is heard.
                        while pages.page("chart|RJ|y1|album") != nil {
                            await announcer.announce(.listensChanged(user: "rj"))
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        // Listening now (on listening, everything kept was
                        // dropped: notices may have been missed before):
                        // RJ's notice drops RJ's pages and cards alone.
                        pages.keep("chart|RJ|y1|album", status: .ok, body: body)
                        pages.keep("api|chart|ybsc|y1|album", status: .ok, body: body)
                        cards.keep("card|RJ|y1", status: .ok, body: body)
                        await announcer.announce(.listensChanged(user: "rj"))
                        while pages.page("chart|RJ|y1|album") != nil { try await Task.sleep(for: .milliseconds(20)) }
                        let until = Int64(july2023.timeIntervalSince1970) + 200
                        await announcer.announce(.playingNow(user: "RJ", artist: "Low", track: "Lullaby", album: "I Could Live in Hope", until: until))
                        while nowPlaying.track(of: rj) == nil { try await Task.sleep(for: .milliseconds(20)) }
                        group.cancelAll()
                    }
                    #expect(cards.page("card|RJ|y1") == nil)
                    #expect(pages.page("api|chart|ybsc|y1|album") != nil)
                    #expect(nowPlaying.track(of: rj) == NowPlaying.Track(artist: "Low", track: "Lullaby", album: "I Could Live in Hope",
                                                                         until: july2023.addingTimeInterval(200)))
                }
            }
        }
    }
}
