import Foundation
import Hummingbird
import Testing
import VinylogueCore
@testable import VinylogueServer

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

    @Test func replacingAPageCountsItOnce() {
        let pages = RenderedPages(clock: .fixed(july2023), maxBytes: 1 << 20)
        for _ in 0..<100 { pages.keep("same", status: .ok, body: ByteBuffer(string: "12345")) }
        #expect(pages.keptBytes == 5)
    }
}
