import Foundation

/// `YearInReview` as the command line and the JSON API give it.
public struct YearJSONView: Encodable, Sendable {
    struct Week: Encodable { let from: Int64; let to: Int64 }
    struct Entry: Encodable {
        let rank: Int
        let artist: String
        let name: String
        let plays: Int
        let mbid: String?
    }
    struct Discovery: Encodable {
        let artist: String
        let name: String
        let plays: Int
        let firstWeek: Week
        let lastWeek: Week
        let weeks: Int
    }
    struct Month: Encodable {
        let month: Int
        let name: String
        let plays: Int
        let album: Entry?
    }
    struct Totals: Encodable {
        let plays: Int
        let albums: Int
        let artists: Int
        let tracks: Int
        let days: Int
    }
    struct TopWeek: Encodable {
        let week: Week
        let plays: Int
    }
    struct Weekday: Encodable {
        let day: String
        let plays: Int
    }

    let user: String
    let year: Int
    let timeZone: String
    let previousYear: Int?
    let nextYear: Int?
    let totals: Totals
    let previousPlays: Int
    let changePercent: Int?
    /// Where the count stopped, while the year is under way.
    let through: Int64?
    let topAlbums: [Entry]
    let topArtists: [Entry]
    let topTracks: [Entry]
    let discoveries: [Discovery]
    let months: [Month]
    let topWeek: TopWeek?
    let weekdays: [Weekday]
    let hours: [Int]

    public init(_ review: YearInReview) {
        func entries(_ list: [YearInReview.Entry]) -> [Entry] {
            list.enumerated().map { Entry(rank: $0.offset + 1, artist: $0.element.artist, name: $0.element.name, plays: $0.element.plays, mbid: $0.element.mbid) }
        }
        user = review.user.value
        year = review.year
        timeZone = review.timeZone.identifier
        previousYear = review.previousYear
        nextYear = review.nextYear
        let t = review.totals
        totals = Totals(plays: t.plays, albums: t.albums, artists: t.artists, tracks: t.tracks, days: t.days)
        previousPlays = review.previousPlays
        changePercent = review.change
        through = review.through
        topAlbums = entries(review.topAlbums)
        topArtists = entries(review.topArtists)
        topTracks = entries(review.topTracks)
        discoveries = review.discoveries.map {
            Discovery(artist: $0.album.artist, name: $0.album.name, plays: $0.album.plays, firstWeek: Week(from: $0.firstWeek.from, to: $0.firstWeek.to),
                      lastWeek: Week(from: $0.lastWeek.from, to: $0.lastWeek.to), weeks: $0.weeks)
        }
        months = review.months.map { month in
            Month(month: month.month + 1, name: YearInReview.monthNames[month.month], plays: month.plays,
                  album: month.album.map { Entry(rank: 1, artist: $0.artist, name: $0.name, plays: $0.plays, mbid: $0.mbid) })
        }
        topWeek = review.topWeek.map { TopWeek(week: Week(from: $0.week.from, to: $0.week.to), plays: $0.plays) }
        weekdays = zip(YearInReview.weekdayNames, review.weekdays).map { Weekday(day: $0, plays: $1) }
        hours = review.hours
    }

    /// Pretty-printed, keys sorted, slashes unescaped.
    public func data() -> Data { StableJSON.data(self) }
}

extension YearInReview {
    public static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                                    "November", "December"]
    /// Monday first, as `weekdays` counts.
    public static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// The nearest earlier year of the person's history, if any.
    public var previousYear: Int? { years.flatMap { year > $0.lowerBound ? min(year - 1, $0.upperBound) : nil } }
    /// The nearest later year of the person's history, if any.
    public var nextYear: Int? { years.flatMap { year < $0.upperBound ? max(year + 1, $0.lowerBound) : nil } }
}
