import Foundation
@testable import HTTPServing
import Hummingbird
@testable import ListenIngest
import Testing
import VinylogueCore
@testable import Web

/// The rendered-page cache stays within its byte budget whatever is asked
/// (1,900 unique 60 KB URLs used to add 115 MB).
@Suite struct RenderedPagesTests {
    @Test func manyDistinctPagesStayWithinTheByteBudget() {
        let pages = RenderedPages(clock: .fixed(july2023), capacity: 10_000, maxBytes: 1 << 20)
        let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: 60 * 1024)
        for n in 0..<1_900 {
            pages.keep("page \(n)", status: .ok, body: body)
            #expect(pages.keptBytes <= 1 << 20)
        }
        #expect(pages.page("page 1899") != nil)
        pages.removeAll()
        #expect(pages.keptBytes == 0)
    }

    /// Every lookup is counted as a hit or a miss (an expired entry is a
    /// miss), for `/healthz` and the benchmark's hit ratio.
    @Test func lookupsAreCountedAsHitsAndMisses() {
        let clock = TestClock(july2023)
        let pages = RenderedPages(clock: clock.wallClock, lifetime: 60, capacity: 6, maxBytes: 1 << 20)
        #expect(pages.page("chart|RJ|y1|album") == nil)
        pages.keep("chart|RJ|y1|album", status: .ok, body: ByteBuffer(string: "page"))
        #expect(pages.page("chart|RJ|y1|album") != nil)
        #expect(pages.page("chart|RJ|y1|album") != nil)
        clock.advance(days: 61.0 / 86400)
        #expect(pages.page("chart|RJ|y1|album") == nil)
        #expect(pages.counts.hits == 2 && pages.counts.misses == 2)
        // Filled past its capacity, the cache starts over; its counts do not
        // (they read as negative over a benchmark's cold run when they did).
        for n in 0..<7 { pages.keep("chart|RJ|y\(n)|track", status: .ok, body: ByteBuffer(string: "page")) }
        pages.removeAll()
        #expect(pages.counts.hits == 2 && pages.counts.misses == 2)
    }

    /// A user's answers are found through the index of fields, however
    /// they left or came back: only keys that name the user go, in any
    /// case, and nothing else; expired and evicted ones are forgotten.
    @Test func removingAUsersPagesTakesExactlyTheirs() throws {
        let clock = TestClock(july2023)
        let pages = RenderedPages(clock: clock.wallClock, lifetime: 60, capacity: 6, maxBytes: 1 << 20)
        let body = ByteBuffer(string: "page")
        let rj = try Username("RJ")
        pages.keep("chart|RJ|y1|album", status: .ok, body: body)
        pages.keep("api|chart|rj|y2|artist", status: .ok, body: body)
        pages.keep("everyone|demo,RJ,ybsc|s0", status: .ok, body: body)
        pages.keep("chart|RJX|y1|album", status: .ok, body: body)
        pages.keep("chart|demo|y1|album", status: .ok, body: body)
        pages.removePages(of: rj)
        #expect(pages.page("chart|RJ|y1|album") == nil && pages.page("api|chart|rj|y2|artist") == nil)
        #expect(pages.page("everyone|demo,RJ,ybsc|s0") == nil)
        #expect(pages.page("chart|RJX|y1|album") != nil && pages.page("chart|demo|y1|album") != nil)
        #expect(pages.keptBytes == 8)
        // Kept again, expired, evicted: the index follows.
        pages.keep("chart|RJ|y1|album", status: .ok, body: body)
        clock.advance(days: 61.0 / 86400)
        #expect(pages.page("chart|RJ|y1|album") == nil)
        for n in 0..<8 { pages.keep("chart|RJ|y\(n)|track", status: .ok, body: body) }
        pages.removePages(of: rj)
        #expect((0..<8).allSatisfy { pages.page("chart|RJ|y\($0)|track") == nil })
    }

    @Test func replacingAPageCountsItOnce() {
        let pages = RenderedPages(clock: .fixed(july2023), maxBytes: 1 << 20)
        for _ in 0..<100 { pages.keep("same", status: .ok, body: ByteBuffer(string: "12345")) }
        #expect(pages.keptBytes == 5)
    }
}
