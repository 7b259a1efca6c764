import Foundation

/// The calendar year of a person's time zone: where it starts and ends,
/// and where its months start, in Unix seconds.
public struct ListeningYear: Sendable, Hashable {
    public let year: Int
    public let timeZone: TimeZone
    /// The instant the year starts, and the instant the next one does.
    public let start: Int64
    public let end: Int64
    /// The instant each of its twelve months starts (January first).
    public let monthStarts: [Int64]
    /// Where the count stops when the year is still under way (`now`), and
    /// the same moment a year before, up to which the year before is
    /// counted for the comparison; nil for a year that is over (or not begun).
    public let through: Int64?
    public let previousThrough: Int64?

    /// `year` in `timeZone`'s Gregorian calendar, as seen at `now`; nil
    /// outside years 1…9999.
    public init?(_ year: Int, timeZone: TimeZone, now: Date? = nil) {
        guard (1...9999).contains(year) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func start(_ year: Int, _ month: Int) -> Int64? {
            calendar.date(from: DateComponents(year: year, month: month, day: 1)).map { Int64($0.timeIntervalSince1970.rounded(.down)) }
        }
        var months: [Int64] = []
        for month in 1...12 {
            guard let at = start(year, month) else { return nil }
            months.append(at)
        }
        guard let next = start(year + 1, 1) else { return nil }
        self.year = year
        self.timeZone = timeZone
        self.start = months[0]
        self.end = next
        monthStarts = months
        if let now, Int64(now.timeIntervalSince1970) >= months[0], Int64(now.timeIntervalSince1970) < next {
            through = Int64(now.timeIntervalSince1970.rounded(.down))
            previousThrough = calendar.date(byAdding: .year, value: -1, to: now).map { Int64($0.timeIntervalSince1970.rounded(.down)) }
        } else {
            (through, previousThrough) = (nil, nil)
        }
    }

    /// "2019", "2019", "02019": exactly four digits, from 1000 — what an
    /// address or the command line may name a year by; nil otherwise.
    public static func number(_ text: String) -> Int? {
        guard text.utf8.count == 4, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let year = Int(text), year >= 1000 else { return nil }
        return year
    }

    /// The year of `instant` in `timeZone`.
    public static func year(of instant: Int64, in timeZone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.component(.year, from: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    /// The zone's offsets from UTC through the year: each from the instant
    /// it starts (the first from before the year), in order.
    public var offsets: [(from: Int64, offset: Int64)] {
        var found: [(from: Int64, offset: Int64)] = []
        var at = Date(timeIntervalSince1970: TimeInterval(start - 86_400))
        let last = Date(timeIntervalSince1970: TimeInterval(end))
        found.append((Int64(at.timeIntervalSince1970), Int64(timeZone.secondsFromGMT(for: at))))
        while let next = timeZone.nextDaylightSavingTimeTransition(after: at), next < last, found.count < 64 {
            found.append((Int64(next.timeIntervalSince1970.rounded(.down)), Int64(timeZone.secondsFromGMT(for: next))))
            at = next
        }
        return found
    }

    /// The year before this one, in the same zone.
    public var previous: ListeningYear? { ListeningYear(year - 1, timeZone: timeZone) }

    /// Where the year before is counted to for the comparison: the same
    /// moment a year ago while this year is under way, else its end.
    public var previousEnd: Int64? { previousThrough ?? previous?.end }

    /// The chart week the year's first instant falls in (which may start
    /// in the year before).
    public var firstWeek: ChartWeek { LastFMWeekCalendar.week(containing: start) }
}

/// What the archive counts of one year of a person's listening, for
/// `YearInReview`: plays per spelling and month, plays per quarter hour,
/// and what it keeps of each album's whole life. Each store fills it with
/// its own queries (`ArchiveReading.yearListening`).
public struct YearListening: Sendable, Hashable {
    /// One track's plays in one month, as spelled.
    public struct Row: Sendable, Hashable {
        /// The month, 0 for January.
        public let month: Int
        public let artist: String
        public let albumArtist: String?
        public let album: String
        public let track: String
        public let plays: Int
        /// A release id its listens carry, if any.
        public let albumMBID: String?

        public init(month: Int, artist: String, albumArtist: String?, album: String, track: String, plays: Int, albumMBID: String?) {
            self.month = month
            self.artist = artist
            self.albumArtist = albumArtist.flatMap { $0.isEmpty ? nil : $0 }
            self.album = album
            self.track = track
            self.plays = plays
            self.albumMBID = albumMBID.flatMap { $0.isEmpty ? nil : $0 }
        }

        /// Whose album it is (`Scrobble.artistOfAlbum`).
        public var artistOfAlbum: String { albumArtist ?? artist }
    }

    /// An album's whole life in the kept weekly charts.
    public struct AlbumSpan: Sendable, Hashable {
        /// The first and last weeks it charted, and in how many weeks.
        public let first: ChartWeek
        public let last: ChartWeek
        public let weeks: Int

        public init(first: ChartWeek, last: ChartWeek, weeks: Int) {
            self.first = first
            self.last = last
            self.weeks = weeks
        }
    }

    /// The length of a bucket of `quarterHours`: every time zone's offset
    /// is a whole number of them, so each falls in one local hour.
    public static let bucket: Int64 = 900

    public var rows: [Row]
    /// Plays per quarter hour of the year, keyed by the instant it starts
    /// (the year's start plus a whole number of `bucket`s): for the
    /// weekday, the hour, the day and the week.
    public var quarterHours: [Int64: Int]
    /// The album keys (`folding`'s) of the year's albums, with their lives.
    public var albumSpans: [String: AlbumSpan]
    /// Album keys played between the start of the year's first chart week
    /// and the year's start (played before the year, in the same week).
    public var playedJustBefore: Set<String>
    /// Plays in the year before.
    public var previousPlays: Int
    /// How the person's albums group.
    public var folding: AlbumFolding

    public init(rows: [Row], quarterHours: [Int64: Int], albumSpans: [String: AlbumSpan], playedJustBefore: Set<String>, previousPlays: Int,
                folding: AlbumFolding) {
        self.rows = rows
        self.quarterHours = quarterHours
        self.albumSpans = albumSpans
        self.playedJustBefore = playedJustBefore
        self.previousPlays = previousPlays
        self.folding = folding
    }

    /// The album keys of `rows`, as `folding` groups them: what a store
    /// asks the album index about.
    public static func albumKeys(of rows: [Row], folding: AlbumFolding) -> Set<String> {
        var names = ScrobbleTally.FoldedNames(folding)
        var keys = Set<String>()
        var seen = Set<[String]>()
        for row in rows where !row.album.isEmpty && seen.insert([row.artistOfAlbum, row.album]).inserted {
            keys.insert(names.folded(.album, artist: row.artistOfAlbum, name: row.album).key)
        }
        return keys
    }
}

/// A person's year: what they played most, what they found, when they
/// listened. The presenter of `/u/{user}/year/{YYYY}` and `vinylogue year`.
public struct YearInReview: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public let artist: String
        public let name: String
        public let plays: Int
        public let mbid: String?
    }

    /// An album first played this year.
    public struct Discovery: Sendable, Hashable {
        public let album: Entry
        /// The first week it charted, the last, and in how many weeks.
        public let firstWeek: ChartWeek
        public let lastWeek: ChartWeek
        public let weeks: Int
    }

    /// One month: its plays and its album.
    public struct Month: Sendable, Hashable {
        /// 0 for January.
        public let month: Int
        public let plays: Int
        public let album: Entry?
        /// Not begun yet (the year is under way).
        public var isAhead = false
    }

    public struct Totals: Sendable, Hashable {
        public let plays: Int
        public let albums: Int
        public let artists: Int
        public let tracks: Int
        /// Days (in the person's zone) with at least one play.
        public let days: Int
    }

    public let user: Username
    public let year: Int
    public let timeZone: TimeZone
    /// The years of the person's history (for the way between years),
    /// which need not hold `year`.
    public let years: ClosedRange<Int>?
    public let totals: Totals
    /// Plays in the year before (0 when it has none), up to the same
    /// moment when this year is still under way (`through`).
    public let previousPlays: Int
    /// Where the count stopped, when the year is still under way.
    public let through: Int64?
    public let topAlbums: [Entry]
    public let topArtists: [Entry]
    public let topTracks: [Entry]
    /// The albums first played this year, most played first.
    public let discoveries: [Discovery]
    public let months: [Month]
    /// A chart week and its plays within the year.
    public struct WeekPlays: Sendable, Hashable {
        public let week: ChartWeek
        public let plays: Int
    }

    /// The chart week played most.
    public let topWeek: WeekPlays?
    /// Plays by weekday, Monday first, and by hour (0–23), in the zone.
    public let weekdays: [Int]
    public let hours: [Int]

    /// How many of each list are kept.
    public static let topCount = 10
    public static let discoveryCount = 10


    /// How the year compares with the one before, in a sentence: "13% fewer
    /// than in 2023 (6,589 plays)", "By this date, 4% more than in 2025
    /// (5,120 plays)"; nil when the year before had no plays.
    public var changeSentence: String? {
        guard let change else { return nil }
        let before = "\(year - 1) (\(previousPlays == 1 ? "1 play" : "\(grouped(previousPlays)) plays"))"
        let said = change == 0 ? "about as many as in \(before)" : "\(abs(change))% \(change > 0 ? "more" : "fewer") than in \(before)"
        return through == nil ? said.prefix(1).uppercased() + said.dropFirst() + "." : "By this date, \(said)."
    }


    /// The change in plays from the year before (up to the same moment
    /// while this year is under way), in percent; nil when that year had none.
    public var change: Int? {
        guard previousPlays > 0 else { return nil }
        return Int(((Double(totals.plays) - Double(previousPlays)) / Double(previousPlays) * 100).rounded())
    }

    /// `listening` of `year` made a year's story. `span` is the person's
    /// whole history (first and last listen), for the years around it.
    public static func build(user: Username, year: ListeningYear, listening: YearListening, span: ClosedRange<Int64>?) -> YearInReview {
        var names = ScrobbleTally.FoldedNames(listening.folding)
        var albums = ScrobbleTally.Tally(kind: .album, folding: listening.folding)
        var artists = ScrobbleTally.Tally(kind: .artist, folding: listening.folding)
        var tracks = ScrobbleTally.Tally(kind: .track, folding: listening.folding)
        var monthAlbums = (0..<12).map { _ in ScrobbleTally.Tally(kind: .album, folding: listening.folding) }
        var monthPlays = [Int](repeating: 0, count: 12)
        var plays = 0
        // Rows in a fixed order, so a group's shown spelling and id never
        // depend on the order the store gave them in.
        let rows = listening.rows.sorted { a, b in
            (a.artistOfAlbum, a.album, a.artist, a.track, a.month) < (b.artistOfAlbum, b.album, b.artist, b.track, b.month)
        }
        for row in rows {
            plays += row.plays
            guard (0..<12).contains(row.month) else { continue }
            monthPlays[row.month] += row.plays
            swap(&albums.names, &names)
            albums.add(artist: row.artistOfAlbum, album: row.album, track: row.track, mbid: row.albumMBID, plays: row.plays)
            swap(&albums.names, &names)
            artists.add(artist: row.artist, album: "", track: "", plays: row.plays)
            tracks.add(artist: row.artist, album: "", track: row.track, plays: row.plays)
            swap(&monthAlbums[row.month].names, &names)
            monthAlbums[row.month].add(artist: row.artistOfAlbum, album: row.album, track: row.track, mbid: row.albumMBID, plays: row.plays)
            swap(&monthAlbums[row.month].names, &names)
        }
        func entries(_ ranked: [ChartEntry]) -> [Entry] {
            ranked.map { Entry(artist: $0.artist, name: $0.name, plays: $0.plays, mbid: $0.mbid) }
        }
        let allAlbums = albums.ranked()
        let allArtists = artists.ranked()
        let allTracks = tracks.ranked()

        // Discoveries: albums whose first charted week is the year's (or
        // the week the year starts in, unless played before the year began).
        var discoveries: [Discovery] = []
        for album in allAlbums {
            let key = names.folded(.album, artist: album.artist, name: album.name).key
            guard let span = listening.albumSpans[key] else { continue }
            let first = span.first
            let found = first.from >= year.start || first == year.firstWeek && !listening.playedJustBefore.contains(key)
            guard found else { continue }
            discoveries.append(Discovery(album: Entry(artist: album.artist, name: album.name, plays: album.plays, mbid: album.mbid),
                                         firstWeek: first, lastWeek: span.last, weeks: span.weeks))
            if discoveries.count == discoveryCount { break }
        }

        // When: weekday and hour in the zone, the week played most, days
        // played. The zone's offset changes only at its transitions, so
        // each quarter hour is placed by arithmetic, not by a calendar.
        let offsets = year.offsets
        var weekdays = [Int](repeating: 0, count: 7)
        var hours = [Int](repeating: 0, count: 24)
        var weeks: [ChartWeek: Int] = [:]
        var days = Set<Int64>()
        for (instant, count) in listening.quarterHours {
            guard instant >= year.start, instant < year.end else { continue }
            let offset = offsets.last { $0.from <= instant }?.offset ?? 0
            let local = instant + offset
            let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
            // 1 January 1970 was a Thursday (3, counting from Monday).
            weekdays[Int(((day % 7) + 7 + 3) % 7)] += count
            hours[Int((local - day * 86_400) / 3600)] += count
            days.insert(day)
            weeks[LastFMWeekCalendar.week(containing: instant), default: 0] += count
        }
        let topWeek = weeks.max { a, b in a.value != b.value ? a.value < b.value : a.key > b.key }

        var years: ClosedRange<Int>?
        if let span {
            let first = ListeningYear.year(of: span.lowerBound, in: year.timeZone)
            let last = ListeningYear.year(of: span.upperBound, in: year.timeZone)
            years = min(first, last)...max(first, last)
        }
        return YearInReview(
            user: user, year: year.year, timeZone: year.timeZone, years: years,
            totals: Totals(plays: plays, albums: allAlbums.count, artists: allArtists.count, tracks: allTracks.count, days: days.count),
            previousPlays: listening.previousPlays, through: year.through,
            topAlbums: entries(Array(allAlbums.prefix(topCount))), topArtists: entries(Array(allArtists.prefix(topCount))),
            topTracks: entries(Array(allTracks.prefix(topCount))), discoveries: discoveries,
            months: (0..<12).map { month in
                Month(month: month, plays: monthPlays[month], album: monthAlbums[month].ranked().first.map {
                    Entry(artist: $0.artist, name: $0.name, plays: $0.plays, mbid: $0.mbid)
                }, isAhead: year.through.map { year.monthStarts[month] > $0 } ?? false)
            },
            topWeek: topWeek.map { WeekPlays(week: $0.key, plays: $0.value) }, weekdays: weekdays, hours: hours)
    }
}
