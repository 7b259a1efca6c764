import Foundation
import VinylogueCore

/// The ranked album and artist charts of every Last.fm week a person
/// played in, kept in the archive beside the scrobbles (`weekly_chart`,
/// in both stores): a whole week's chart is a read of its rows in rank
/// order, "this week in every year" a read of the top rows of a few weeks,
/// and an album's whole life one range of an index that carries its rank
/// and plays in each week.
///
/// A week's rows are counted by `ScrobbleTally` from all of that week's
/// scrobbles, in the archive's order (`canonicalOrder`), so they are
/// exactly the chart a count of the stored rows gives. Every write counts
/// again the weeks it inserted rows into, in its own transaction: from the
/// rows it inserted when they are all the week holds (a first import),
/// else from the week's stored scrobbles. A write that inserts nothing
/// (a re-import) touches nothing.
///
/// Track charts are counted from the scrobbles: a week rarely repeats a
/// track, so their rows would be nearly a row per scrobble, and read no
/// faster than the week's scrobbles.
public enum WeeklyRollup {
    /// One row: the entry at one rank of one week's chart of one kind.
    public struct ChartRow: Sendable, Hashable {
        public let week: Int64
        public let kind: ChartKind
        public let entry: ChartEntry
        /// The album's key (`ScrobbleTally.key`, as the person's choice
        /// folds it), for album rows: what the album index is ordered by.
        public let albumKey: String?

        public init(week: Int64, kind: ChartKind, entry: ChartEntry, folding: AlbumFolding = .editions) {
            self.week = week
            self.kind = kind
            self.entry = entry
            albumKey = kind == .album ? ScrobbleTally.key(.album, artist: entry.artist, album: entry.name, track: "", folding: folding) : nil
        }

        /// The same, folding the album's names with `names`.
        public init(week: Int64, kind: ChartKind, entry: ChartEntry, names: inout ScrobbleTally.FoldedNames) {
            self.week = week
            self.kind = kind
            self.entry = entry
            albumKey = kind == .album && !entry.name.isEmpty ? names.folded(.album, artist: entry.artist, name: entry.name).key : nil
        }

        /// `row` with another `entry` and `albumKey` (a store's cleaned
        /// copy of its names).
        public init(_ row: ChartRow, entry: ChartEntry, albumKey: String?) {
            week = row.week
            kind = row.kind
            self.entry = entry
            self.albumKey = albumKey
        }
    }

    /// The kinds whose charts are kept.
    public static let kinds: [ChartKind] = [.album, .artist]

    /// The rows of one week's charts, counted from all of its `scrobbles`
    /// (in any order: they are put in `canonicalOrder` first).
    public static func rows(week: Int64, scrobbles: [Scrobble], folding: AlbumFolding = .editions) -> [ChartRow] {
        var names = ScrobbleTally.FoldedNames(folding)
        return rows(week: week, scrobbles: scrobbles, names: &names)
    }

    /// The same, folding names with `names` (one write's, shared by the
    /// weeks it counts).
    public static func rows(week: Int64, scrobbles: [Scrobble], names: inout ScrobbleTally.FoldedNames) -> [ChartRow] {
        let ordered = scrobbles.sorted(by: canonicalOrder)
        var rows: [ChartRow] = []
        for kind in kinds {
            var tally = ScrobbleTally.Tally(kind: kind, folding: names.folding)
            // The tally takes the names and gives them back (a swap: no copy).
            swap(&tally.names, &names)
            for s in ordered { tally.add(s) }
            swap(&tally.names, &names)
            for entry in tally.ranked() { rows.append(ChartRow(week: week, kind: kind, entry: entry, names: &names)) }
        }
        return rows
    }

    /// A week's plays of one spelling (artist, album artist and album) as a database
    /// counts them, with the first MusicBrainz ids its scrobbles carry in
    /// `canonicalOrder` and where each was: what counting a week needs,
    /// without its every scrobble.
    public struct SpellingPlays: Sendable, Hashable {
        /// A spelling's first id of one kind, and the scrobble it came with.
        public struct FirstID: Sendable, Hashable {
            public let id: String
            public let instant: Int64
            public let track: String

            public init(id: String, instant: Int64, track: String) {
                self.id = id
                self.instant = instant
                self.track = track
            }
        }

        /// The track artist (the artist chart's name).
        public let artist: String
        /// The album artist the listens named, if any (`Scrobble.albumArtist`).
        public let albumArtist: String?
        public let album: String
        public let plays: Int
        public let albumMBID: FirstID?
        public let artistMBID: FirstID?

        public init(artist: String, albumArtist: String? = nil, album: String, plays: Int, albumMBID: FirstID?, artistMBID: FirstID?) {
            self.artist = artist
            self.albumArtist = albumArtist.flatMap { $0.isEmpty ? nil : $0 }
            self.album = album
            self.plays = plays
            self.albumMBID = albumMBID
            self.artistMBID = artistMBID
        }
    }

    /// The same rows as `rows(week:scrobbles:folding:)` from the week's
    /// plays per spelling: each kind's tally is fed the spellings in the
    /// order of their first id of that kind, so a group shows the id its
    /// earliest scrobble with one carried, as the scrobbles in
    /// `canonicalOrder` give.
    public static func rows(week: Int64, spellings: [SpellingPlays], folding: AlbumFolding = .editions) -> [ChartRow] {
        var names = ScrobbleTally.FoldedNames(folding)
        return rows(week: week, spellings: spellings, names: &names)
    }

    /// The same, folding names with `names` (shared by the weeks counted together).
    public static func rows(week: Int64, spellings: [SpellingPlays], names: inout ScrobbleTally.FoldedNames) -> [ChartRow] {
        func before(_ a: SpellingPlays.FirstID?, _ aArtist: String, _ b: SpellingPlays.FirstID?, _ bArtist: String) -> Bool {
            guard let a else { return false }
            guard let b else { return true }
            return canonicalOrder(Scrobble(instant: a.instant, artist: aArtist, album: "", track: a.track),
                                  Scrobble(instant: b.instant, artist: bArtist, album: "", track: b.track))
        }
        var rows: [ChartRow] = []
        for kind in kinds {
            let ordered = kind == .album
                ? spellings.sorted { before($0.albumMBID, $0.artist, $1.albumMBID, $1.artist) }
                : spellings.sorted { before($0.artistMBID, $0.artist, $1.artistMBID, $1.artist) }
            var tally = ScrobbleTally.Tally(kind: kind, folding: names.folding)
            swap(&tally.names, &names)
            for s in ordered {
                tally.add(artist: kind == .album ? s.albumArtist ?? s.artist : s.artist, album: s.album, track: "", mbid: kind == .album ? s.albumMBID?.id : s.artistMBID?.id, plays: s.plays)
            }
            swap(&tally.names, &names)
            for entry in tally.ranked() { rows.append(ChartRow(week: week, kind: kind, entry: entry, names: &names)) }
        }
        return rows
    }

    /// A week's kept `entries` of `kind` (in rank order) with `added`
    /// counted in, when that is exactly what counting the whole week again
    /// gives; nil when only a whole count can say. Each added scrobble must
    /// start a new group or be spelled as its group is shown (the shown
    /// spelling is the one played most, so one more play keeps it; ties go
    /// by spelling, not by order); another spelling of a known group could
    /// overtake the shown one, which only a whole count knows.
    ///
    /// Order matters only for a group's MusicBrainz id, the first one seen
    /// in `canonicalOrder`. `afterAll` says every added scrobble comes after
    /// all the week's others: then a kept id stays. Otherwise an added id
    /// can be counted in only where the group kept none (none of its
    /// scrobbles had one) or the same one.
    ///
    /// What makes a listen received one at a time (or an import into weeks
    /// that hold listens already) cost a read of the week's chart rows
    /// rather than of all its scrobbles.
    public static func adding(_ added: [Scrobble], to entries: [ChartEntry], kind: ChartKind, afterAll: Bool = true,
                              folding: AlbumFolding = .editions) -> [ChartEntry]? {
        var names = ScrobbleTally.FoldedNames(folding)
        return adding(added, to: entries, kind: kind, afterAll: afterAll, names: &names)
    }

    /// The same, folding names with `names` (one write's).
    public static func adding(_ added: [Scrobble], to entries: [ChartEntry], kind: ChartKind, afterAll: Bool = true,
                              names: inout ScrobbleTally.FoldedNames) -> [ChartEntry]? {
        struct Group {
            var entry: ChartEntry
            let foldedArtist: String
            let foldedName: String
            /// The id the kept rows gave it (nil for a new group).
            var keptMBID: String? = nil
        }
        func folded(_ artist: String, _ name: String) -> AlbumFolding.Folded { names.folded(kind, artist: artist, name: name) }
        var groups: [Group] = []
        var index: [String: Int] = [:]
        groups.reserveCapacity(entries.count + added.count)
        for entry in entries {
            let f = folded(entry.artist, entry.name)
            // Two kept rows one album now (a release tied them in this
            // write): the week is counted from its listens.
            guard index[f.key] == nil else { return nil }
            index[f.key] = groups.count
            groups.append(Group(entry: entry, foldedArtist: f.artist, foldedName: f.name, keptMBID: entry.mbid))
        }
        for scrobble in added.sorted(by: canonicalOrder) {
            let artist: String, name: String
            let mbid: String?
            switch kind {
            case .album:
                if scrobble.album.isEmpty { continue }
                (artist, name, mbid) = (scrobble.artistOfAlbum, scrobble.album, scrobble.albumMBID)
            case .artist: (artist, name, mbid) = (scrobble.artist, scrobble.artist, scrobble.artistMBID)
            case .track: return nil
            }
            let f = folded(artist, name)
            if let n = index[f.key] {
                let shown = groups[n].entry
                guard shown.artist == artist, shown.name == name else { return nil }
                if !afterAll, let kept = groups[n].keptMBID, let mbid, !mbid.isEmpty, mbid != kept { return nil }
                let keptID = shown.mbid ?? (mbid?.isEmpty == false ? mbid : nil)
                groups[n].entry = ChartEntry(rank: shown.rank, artist: shown.artist, name: shown.name, plays: shown.plays + 1, mbid: keptID)
            } else {
                index[f.key] = groups.count
                groups.append(Group(entry: ChartEntry(rank: 0, artist: artist, name: name, plays: 1, mbid: mbid?.isEmpty == false ? mbid : nil),
                                    foldedArtist: f.artist, foldedName: f.name))
            }
        }
        // Most plays first; ties by folded artist, then folded name (as `ScrobbleTally.Tally.ranked`).
        groups.sort { x, y in
            if x.entry.plays != y.entry.plays { return x.entry.plays > y.entry.plays }
            if x.foldedArtist != y.foldedArtist { return x.foldedArtist < y.foldedArtist }
            return x.foldedName < y.foldedName
        }
        return groups.enumerated().map { rank, group in
            ChartEntry(rank: rank + 1, artist: group.entry.artist, name: group.entry.name, plays: group.entry.plays, mbid: group.entry.mbid)
        }
    }

    /// The order a week's scrobbles are counted in (which decides whose
    /// MusicBrainz id a group shows): by time, then artist and track as
    /// bytes, as SQLite's primary key orders them.
    public static func canonicalOrder(_ a: Scrobble, _ b: Scrobble) -> Bool {
        if a.instant != b.instant { return a.instant < b.instant }
        if a.artist != b.artist { return a.artist.utf8.lexicographicallyPrecedes(b.artist.utf8) }
        return a.track.utf8.lexicographicallyPrecedes(b.track.utf8)
    }

    /// The code rows store for `kind`.
    public static func code(_ kind: ChartKind) -> Int16 {
        switch kind {
        case .album: 0
        case .artist: 1
        case .track: 2
        }
    }

    /// Whether the kept charts hold `kind` for `weeks`: a kept kind, and
    /// whole Last.fm weeks, the only spans they count.
    public static func canRead(_ kind: ChartKind, _ weeks: [ChartWeek]) -> Bool {
        kinds.contains(kind) && weeks.allSatisfy { LastFMWeekCalendar.week(containing: $0.from) == $0 }
    }

    /// The end of the Last.fm week starting at `week` (saturating: a
    /// damaged row's time may sit at either end of `Int64`).
    public static func end(of week: Int64) -> Int64 { week.plus(LastFMWeekCalendar.weekLength) }
}

/// The weeks one write inserted scrobbles into, and which rows it knows it
/// inserted there: what `WeeklyRollup` counts again afterwards.
public struct TouchedWeeks: Sendable {
    /// The rows known to be inserted, per week start.
    public private(set) var inserted: [Int64: [Scrobble]] = [:]
    /// Weeks some of whose given rows may or may not have been inserted
    /// (an ignored exact duplicate hides which).
    public private(set) var uncertain: Set<Int64> = []
    /// The album release (and release group) ids the write's listens carry, with their names
    /// as sent (`AlbumReleases`): the ties the write may add.
    public private(set) var releases: Set<ListenRelease> = []
    /// Whether the write removed listens: the person's ties are derived
    /// again from what is left.
    public private(set) var removedListens = false
    private var lastRelease: ListenRelease?

    public init() {}

    public var isEmpty: Bool { inserted.isEmpty && uncertain.isEmpty }

    /// Every touched week, oldest first.
    public var weeks: [Int64] { Set(inserted.keys).union(uncertain).sorted() }

    public mutating func add(inserted s: Scrobble) {
        inserted[LastFMWeekCalendar.week(containing: s.instant).from, default: []].append(s)
        note(s)
    }

    /// A row inserted, or the same row found stored (which names the same
    /// release).
    public mutating func add(perhapsInserted s: Scrobble) {
        uncertain.insert(LastFMWeekCalendar.week(containing: s.instant).from)
        note(s)
    }

    /// A stored row deleted.
    public mutating func add(removed s: Scrobble) {
        uncertain.insert(LastFMWeekCalendar.week(containing: s.instant).from)
        removedListens = true
    }

    private mutating func note(_ s: Scrobble) {
        guard !s.album.isEmpty else { return }
        if let mbid = s.albumMBID {
            // An album's tracks come one after another: most rows repeat the last.
            if let last = lastRelease, last.mbid == mbid, last.album == s.album, last.artist == s.artistOfAlbum {} else {
                let release = ListenRelease(mbid: mbid, artist: s.artistOfAlbum, album: s.album)
                lastRelease = release
                releases.insert(release)
            }
        }
        // A release group ties as a release does (`AlbumReleases.Release.all`).
        if let group = s.releaseGroupMBID { releases.insert(ListenRelease(mbid: group, artist: s.artistOfAlbum, album: s.album)) }
    }

    /// The rows this write surely inserted into `week`, when it knows them
    /// all (nil when an ignored exact duplicate hides some).
    public func latest(_ week: Int64) -> [Scrobble]? {
        guard !uncertain.contains(week) else { return nil }
        return inserted[week]
    }

    /// The week's rows when the write's own rows are all it holds
    /// (`storedCount` rows are stored in it now), else nil: read them back.
    public func wholeWeek(_ week: Int64, storedCount: Int) -> [Scrobble]? {
        guard !uncertain.contains(week), let rows = inserted[week], rows.count == storedCount else { return nil }
        return rows
    }
}

/// Charts assembled from kept chart rows read in rank order: each week
/// asked for gets its rows (a week asked for twice gets them twice; one
/// with no rows, an empty chart).
public struct KeptCharts: Sendable {
    public let kind: ChartKind
    public let weeks: [ChartWeek]
    private var entries: [Int64: [ChartEntry]] = [:]

    public init(kind: ChartKind, weeks: [ChartWeek]) {
        self.kind = kind
        self.weeks = weeks
    }

    /// The distinct starts of the weeks asked for: the rows to read.
    public var weekStarts: [Int64] { Array(Set(weeks.map(\.from))).sorted() }

    /// One row (a week's rows in any order: `WeeklyChart` ranks them).
    public mutating func add(week: Int64, rank: Int, artist: String, name: String, plays: Int, mbid: String?) {
        entries[week, default: []].append(ChartEntry(rank: rank, artist: artist, name: name, plays: plays, mbid: mbid))
    }

    public func charts(of user: Username) -> [WeeklyChart] {
        weeks.map { WeeklyChart(user: user, kind: kind, week: $0, entries: entries[$0.from] ?? []) }
    }
}

/// An album release id on a listen, with the listen's names, as sent
/// (checked and keyed only where the archive has not seen it before).
public struct ListenRelease: Sendable, Hashable {
    public let mbid: String
    public let artist: String
    public let album: String

    public init(mbid: String, artist: String, album: String) {
        self.mbid = mbid
        self.artist = artist
        self.album = album
    }

    /// The release it names, nil when its id ties nothing (`AlbumReleases.Release`).
    public var release: AlbumReleases.Release? { AlbumReleases.Release(mbid: mbid, artist: artist, album: album) }
}
