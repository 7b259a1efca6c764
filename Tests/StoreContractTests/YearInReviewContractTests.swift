import Foundation
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import PostgresStore
@testable import SQLiteStore

/// A year in review from each store against an independent count of a
/// generated history, made in the person's time zone with Foundation's
/// calendar one listen at a time: top lists, the albums first played that
/// year, each month, the week played most, weekdays and hours, days, the
/// year before. The zones start their year on another UTC day (Chatham,
/// UTC+13:45 in January) or late (New York); 2020 is a leap year; March
/// 2020 has no listens at all; an edition and a compilation count as
/// their albums.
@Suite struct YearInReviewContractTests {
    typealias Backend = StoreContractTests.Backend
    static let ana = try! Username("ana")

    struct Album {
        let artist: String
        let album: String
        /// Spellings it is also played as (one album by the rule).
        let editions: [String]
        /// Track artists, when its listens name an album artist.
        let trackArtists: [String]
    }

    static let albums: [Album] = (0..<40).map { n in
        switch n {
        case 3: Album(artist: "Vetiver", album: "Tidewater", editions: ["Tidewater (Deluxe Edition)"], trackArtists: [])
        case 7: Album(artist: "Various Artists", album: "Blue Note Classics", editions: [], trackArtists: ["Lee Morgan", "Horace Silver", "Hank Mobley"])
        default: Album(artist: "Artist \(String(format: "%02d", n % 25))", album: "Album \(String(format: "%02d", n))", editions: [], trackArtists: [])
        }
    }

    /// About 3,000 listens from mid-December 2019 to mid-January 2021, none in March 2020;
    /// albums 30 and up are first played in 2020 and 35 and up only then.
    static func history() -> [Scrobble] {
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        let from: Int64 = 1_576_368_000  // 15 December 2019, 00:00 UTC
        let to: Int64 = 1_610_668_800    // 15 January 2021
        let march2020: Range<Int64> = 1_583_020_800..<1_585_699_200
        var scrobbles: [Scrobble] = []
        var instant = from
        while instant < to {
            instant += Int64(600 + next(12_000))
            guard !march2020.contains(instant) else { continue }
            // Early albums played most; the late ones only from 2020 on.
            var index = min(next(40), next(40))
            if instant < 1_577_836_800, index >= 30 { index = index % 30 }
            let album = albums[index]
            let track = next(6)
            let name = album.editions.isEmpty || next(2) == 0 ? album.album : album.editions[0]
            if album.trackArtists.isEmpty {
                scrobbles.append(Scrobble(instant: instant, artist: album.artist, album: name, track: "Track \(track)"))
            } else {
                scrobbles.append(Scrobble(instant: instant, artist: album.trackArtists[track % album.trackArtists.count], album: name,
                                          track: "Track \(track)", albumArtist: album.artist))
            }
        }
        return scrobbles
    }

    /// What the year holds, counted listen by listen.
    struct Expected {
        var plays = 0
        var albums: [String: Int] = [:]
        var artists: [String: Int] = [:]
        var tracks: [String: Int] = [:]
        var monthPlays = [Int](repeating: 0, count: 12)
        var monthAlbums = [[String: Int]](repeating: [:], count: 12)
        var weekdays = [Int](repeating: 0, count: 7)
        var hours = [Int](repeating: 0, count: 24)
        var days = Set<String>()
        var weeks: [ChartWeek: Int] = [:]
        var previous = 0
        var discovered: Set<String> = []
    }

    /// The album a listen is of, as "artist – album" (editions folded by hand).
    static func albumName(_ s: Scrobble) -> String {
        "\(s.albumArtist ?? s.artist) – \(s.album.replacingOccurrences(of: " (Deluxe Edition)", with: ""))"
    }

    static func expected(_ history: [Scrobble], year: Int, zone: TimeZone) -> Expected {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var e = Expected()
        var firstPlay: [String: Int64] = [:]
        for s in history { firstPlay[albumName(s)] = min(firstPlay[albumName(s)] ?? .max, s.instant) }
        for s in history {
            let parts = calendar.dateComponents([.year, .month, .day, .weekday, .hour], from: Date(timeIntervalSince1970: TimeInterval(s.instant)))
            if parts.year == year - 1 { e.previous += 1 }
            guard parts.year == year else { continue }
            e.plays += 1
            let album = albumName(s)
            e.albums[album, default: 0] += 1
            e.artists[s.artist, default: 0] += 1
            e.tracks["\(s.artist) – \(s.track)", default: 0] += 1
            e.monthPlays[parts.month! - 1] += 1
            e.monthAlbums[parts.month! - 1][album, default: 0] += 1
            e.weekdays[(parts.weekday! + 5) % 7] += 1
            e.hours[parts.hour!] += 1
            e.days.insert("\(parts.month!)-\(parts.day!)")
            e.weeks[LastFMWeekCalendar.week(containing: s.instant), default: 0] += 1
            let first = calendar.dateComponents([.year], from: Date(timeIntervalSince1970: TimeInterval(firstPlay[album]!))).year
            if first == year { e.discovered.insert(album) }
        }
        return e
    }

    /// Most plays first, then by name (the names here sort as they fold).
    static func ranked(_ counts: [String: Int]) -> [String] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.lowercased() < $1.key.lowercased() }.map { "\($0.key) \($0.value)" }
    }

    static func expectReview(_ archive: any ScrobbleArchive, _ history: [Scrobble], year: Int, zone: TimeZone,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let calendarYear = try #require(ListeningYear(year, timeZone: zone), sourceLocation: sourceLocation)
        let review = try #require(try await archive.yearInReview(of: ana, in: calendarYear), sourceLocation: sourceLocation)
        let e = expected(history, year: year, zone: zone)
        let zoneName = zone.identifier
        #expect(review.totals.plays == e.plays, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.totals.albums == e.albums.count, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.totals.artists == e.artists.count, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.totals.tracks == e.tracks.count, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.totals.days == e.days.count, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.previousPlays == e.previous, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.topAlbums.map { "\($0.artist) – \($0.name.replacingOccurrences(of: " (Deluxe Edition)", with: "")) \($0.plays)" }
                == Array(ranked(e.albums).prefix(YearInReview.topCount)), "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.topArtists.map { "\($0.artist) \($0.plays)" } == Array(ranked(e.artists).prefix(YearInReview.topCount)),
                "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.topTracks.map { "\($0.artist) – \($0.name) \($0.plays)" } == Array(ranked(e.tracks).prefix(YearInReview.topCount)),
                "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.months.map(\.plays) == e.monthPlays, "\(zoneName)", sourceLocation: sourceLocation)
        // A month shows the spelling it was played as most; the count is the album's.
        #expect(review.months.map { $0.album.map { "\($0.artist) – \($0.name.replacingOccurrences(of: " (Deluxe Edition)", with: "")) \($0.plays)" } }
                == e.monthAlbums.map { ranked($0).first }, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.weekdays == e.weekdays, "\(zoneName)", sourceLocation: sourceLocation)
        #expect(review.hours == e.hours, "\(zoneName)", sourceLocation: sourceLocation)
        let top = e.weeks.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }
        #expect(review.topWeek?.week == top?.key && review.topWeek?.plays == top?.value, "\(zoneName)", sourceLocation: sourceLocation)
        let found = ranked(e.albums.filter { e.discovered.contains($0.key) })
        #expect(review.discoveries.map { "\($0.album.artist) – \($0.album.name.replacingOccurrences(of: " (Deluxe Edition)", with: "")) \($0.album.plays)" }
                == Array(found.prefix(YearInReview.discoveryCount)), "\(zoneName)", sourceLocation: sourceLocation)
        for discovery in review.discoveries {
            let name = "\(discovery.album.artist) – \(discovery.album.name)"
            let weeks = Set(history.filter { albumName($0) == name }.map { LastFMWeekCalendar.week(containing: $0.instant) })
            #expect(discovery.weeks == weeks.count && discovery.firstWeek == weeks.min() && discovery.lastWeek == weeks.max(),
                    "\(name)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: Backend.allCases)
    func aYearInReviewAgreesWithAnIndependentCountInEachZone(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let archive = stores.scrobbles, history = Self.history()
            try await archive.store(history, of: Self.ana, origin: .lastFMExport)
            for zone in ["Pacific/Chatham", "America/New_York", "UTC"].compactMap(TimeZone.init(identifier:)) {
                try await Self.expectReview(archive, history, year: 2020, zone: zone)
            }
            // The year before, mostly outside the history: its last two weeks.
            try await Self.expectReview(archive, history, year: 2019, zone: .gmt)
            let y2020 = try #require(ListeningYear(2020, timeZone: .gmt)), y2015 = try #require(ListeningYear(2015, timeZone: .gmt))
            let review = try #require(try await archive.yearInReview(of: Self.ana, in: y2020))
            #expect(review.years == 2019...2021)
            #expect(review.previousYear == 2019 && review.nextYear == 2021)
            #expect(review.discoveries.contains { $0.album.name == "Album 35" }, "albums first played in 2020 are found")
            #expect(review.months[2].plays == 0 && review.months[2].album == nil, "March 2020 had no listens")
            #expect(!review.topArtists.contains { $0.artist == "Various Artists" }, "artists are the tracks' own")
            // A year with no listens at all, and someone not archived.
            let empty = try #require(try await archive.yearInReview(of: Self.ana, in: y2015))
            #expect(empty.totals.plays == 0 && empty.topAlbums.isEmpty && empty.nextYear == 2019 && empty.previousYear == nil)
            #expect(try await archive.yearInReview(of: try Username("nobody"), in: y2020) == nil)
        }
    }
}
