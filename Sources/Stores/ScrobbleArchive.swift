import Foundation
import VinylogueCore

/// The scrobble archive: each person's whole listening history, charted
/// without the network. `SQLiteScrobbleStore` (GRDB, the embedded default)
/// and `PostgresScrobbleStore` play it; one contract test suite runs
/// against both.
///
/// It is five roles, each its own protocol, so a part that only charts,
/// only imports, only copies, only seeds the demo or only keeps the
/// person's album choices asks for that role: `ArchiveReading`,
/// `ArchiveWriting`, `SyncLog`, `DemoSeed` and `AlbumChoices`. A store
/// plays them all; `StoreBackend.archive` hands out the whole archive.
///
/// Every write is one transaction and follows the archive's duplicate rule
/// (`SameListenRule`): storing a listen that is already archived, exactly
/// or from another source a few seconds apart, is a counted no-op. Rows are
/// keyed by the user first, then by time, so one person's week is one
/// contiguous range.
public typealias ScrobbleArchive = ArchiveReading & ArchiveWriting & SyncLog & DemoSeed & AlbumChoices

/// What the archive answers about a person's listening: who it holds,
/// their span, their scrobbles and their charts (the kept weekly charts
/// where a whole week is asked). Reads never write.
public protocol ArchiveReading: Sendable {
    /// The name as the archive stores it, when it holds at least one
    /// scrobble of `user`; `nil` otherwise (a user row alone, left by a sync
    /// that failed before its first page, does not count).
    func storedName(of user: Username) async throws(SourceError) -> Username?
    /// The first and last archived instants of `user` within
    /// `PlausibleTime.archived`, if any.
    func span(for user: Username) async throws(SourceError) -> ClosedRange<Int64>?
    /// How many scrobbles are archived for `user`.
    func scrobbleCount(of user: Username) async throws(SourceError) -> Int
    /// Every archived scrobble of `user` in `[from, to)`, in time order.
    func scrobbles(of user: Username, from: Int64, to: Int64) async throws(SourceError) -> [Scrobble]
    /// One page of `user`'s scrobbles in [`from`, `to`), newest first
    /// (`limit` of them after the `offset` newer ones), and how many the
    /// range holds in all: Last.fm's `user.getRecentTracks` over the archive.
    func recentScrobbles(of user: Username, from: Int64, to: Int64, limit: Int, offset: Int) async throws(SourceError) -> RecentScrobbles
    /// The charts of `kind` for `weeks`, in their order, with Last.fm's
    /// semantics (`ScrobbleTally`); `nil` when nothing was ever stored for `user`.
    func charts(_ kind: ChartKind, of user: Username, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart]?
    /// Everything a chart page reads of `user` in one read (one hop to the
    /// database, one snapshot): whether the archive holds them, their span,
    /// the demo's generated end, their history copy when `withCopy`, and the
    /// chart of `kind` for the week `choose` picks from their span. A cold
    /// chart page costs this one read.
    func chartReading(_ kind: ChartKind, of user: Username, withCopy: Bool,
                      choosing choose: @escaping @Sendable (ClosedRange<Int64>) -> ChartWeek?) async throws(SourceError) -> ChartReading
    /// Every week `user` played the album `name` by `artist` (any spelling,
    /// compared as charts compare them), with its plays, oldest first;
    /// `nil` when nothing was ever stored for `user`. From the weekly
    /// rollups' album index: one range however long the history.
    func albumWeeks(of user: Username, artist: String, album name: String) async throws(SourceError) -> [AlbumWeek]?

    /// The keys (`ScrobbleTally.key`) of the albums `user` played in weeks
    /// starting at or after `from`; nil when `user` has no archive.
    func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>?

    /// For `Anniversaries`: the album rows of `user`'s kept charts in the
    /// weeks of `lifeOf`, each with the first and last week its album
    /// charted in; and, of the weeks `around` lists (one list per year),
    /// the rows of the albums that chart in the lists of at least
    /// `inAtLeast` years. Each row once. Nil when the archive does not hold them.
    func albumsCharted(of user: Username, lifeOf: Set<ChartWeek>, around: [[ChartWeek]], inAtLeast: Int) async throws(SourceError) -> [ChartedAlbum]?

    /// What `year` of `user`'s listening counts (`YearInReview`); nil when
    /// the archive does not hold them.
    func yearListening(of user: Username, in year: ListeningYear) async throws(SourceError) -> YearListening?

    /// Every album `user` played, with the spellings it was played as
    /// (`SpelledAlbum.grouped` by their grouping), most played first; nil
    /// when `user` has no archive. A pass over all of their listens.
    func albumSpellings(of user: Username) async throws(SourceError) -> [SpelledAlbum]?

    /// The album `artist` / `album` belongs to (by `user`'s grouping) with
    /// every spelling it was played as and their plays: a read of that
    /// album's weeks. Nil when `user` has no archive or never played it.
    func albumSpellings(of user: Username, artist: String, album: String) async throws(SourceError) -> SpelledAlbum?
}

/// The archive's one write of listens: a batch stored by the duplicate
/// rule with its kept weekly charts, in one transaction (an import's
/// batch, a player's listens, an uploaded export's batch under its job's
/// fence). Imports need only this.
public protocol ArchiveWriting: Sendable {
    /// Stores a batch (an import's), each scrobble with its origin, in one
    /// transaction, by the duplicate rule; with a `fence`, only while that
    /// job's claim holds (else `SourceError.cancelled` and nothing stored).
    func store(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence?) async throws(SourceError) -> InsertCounts

    /// Told once an import has stored all it will, with how many rows were
    /// new: a store may bring what its planner knows up to date.
    func importFinished(inserted: Int) async throws(SourceError)
}

extension ArchiveWriting {
    /// Stores `scrobbles`, all from `origin`, by the duplicate rule.
    @discardableResult
    public func store(_ scrobbles: [Scrobble], of user: Username, origin: ScrobbleOrigin) async throws(SourceError) -> InsertCounts {
        try await store(scrobbles.map { ($0, origin) }, of: user, fence: nil)
    }

    /// Stores a batch outside any job (the command line's own import).
    public func store(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username) async throws(SourceError) -> InsertCounts {
        try await store(batch, of: user, fence: nil)
    }
}

/// Where a copy of a person's history from their service (`ScrobbleSync`)
/// stands, and its pages: a run resumes where the log says, each page is
/// stored with the run's next step in one transaction, and "Delete what
/// was copied" forgets both.
public protocol SyncLog: Sendable {
    /// Where a sync of `user` starts: its unfinished run, if any, and the
    /// newest scrobble that came from their service (synced or exported).
    func syncStart(of user: Username) async throws(SourceError) -> SyncStart
    /// Records a sync run that will take several pages, before its first
    /// (under `fence`, as `ArchiveWriting.store` does).
    func beginSync(_ state: SyncState, of user: Username, fence: JobFence?) async throws(SourceError)
    /// Stores one page of a sync and where the run goes next (`nil`: it is
    /// finished), in one transaction, only while `fence` holds when given:
    /// a copy cancelled meanwhile leaves neither the page nor a resume point.
    /// The page goes in by the duplicate rule, as `ArchiveWriting.store`'s batches do.
    func storeSyncPage(_ scrobbles: [Scrobble], of user: Username, next: SyncState?, fence: JobFence?) async throws(SourceError) -> InsertCounts

    /// Deletes what copies of `user`'s own service stored
    /// (`ScrobbleOrigin.sync(of:)` rows, counting or set aside) and where
    /// the next copy would resume, in one transaction: listens from other
    /// sources that were set aside as the same plays count again where the
    /// duplicate rule says so, and the kept charts follow. Returns how many
    /// counting listens went.
    func forgetCopy(of user: Username) async throws(SourceError) -> Int
}

extension SyncLog {
    /// Records a sync run outside any job (the command line's `sync`).
    public func beginSync(_ state: SyncState, of user: Username) async throws(SourceError) {
        try await beginSync(state, of: user, fence: nil)
    }

    /// Stores a sync page outside any job.
    public func storeSyncPage(_ scrobbles: [Scrobble], of user: Username, next: SyncState?) async throws(SourceError) -> InsertCounts {
        try await storeSyncPage(scrobbles, of: user, next: next, fence: nil)
    }
}

/// The demo's generated history (`GeneratedHistory`): how far it has been
/// written, and its weeks written as generated.
public protocol DemoSeed: Sendable {
    /// The end of the last generated week stored for `user` (the demo).
    func generatedThrough(of user: Username) async throws(SourceError) -> Int64?
    /// Stores generated scrobbles (the demo's, exactly as generated: no
    /// duplicate rule) and the end of the weeks they fill, in one
    /// transaction. Returns how many were new.
    func storeGenerated(_ scrobbles: [Scrobble], of user: Username, through: Int64, seed: Int64,
                        firstWeek: Int64) async throws(SourceError) -> Int
}

/// Where a sync starts (`SyncLog.syncStart`).
public struct SyncStart: Sendable, Hashable {
    /// The run a killed or failed sync left unfinished.
    public var pending: SyncState?
    /// The newest archived scrobble that came from the user's own service
    /// (`ScrobbleOrigin.copies(of:)`: Last.fm's, or ListenBrainz's for an
    /// `lb:` user).
    public var newestFromLastFM: Int64?

    public init(pending: SyncState? = nil, newestFromLastFM: Int64? = nil) {
        self.pending = pending
        self.newestFromLastFM = newestFromLastFM
    }
}

/// The archive's rule for one play counted once across sources and
/// arrivals: of one person's listens of one track (artist and track
/// compared without regard to case, Swift's Unicode lowercasing, as charts
/// merge them), taken in time order, a listen counts when it is the first
/// or at least `window` seconds after the last one that counts; the others
/// are set aside. It is decided over every listen ever received, so the
/// archive is the same whatever order and batches they came in
/// (`plan(_:held:read:)`). See `docs/ARCHIVE.md`, "Duplicates across
/// sources". Both stores apply it through here, so they agree row for row.
public enum SameListenRule {
    /// Two plays of one track closer than this many seconds are one listen.
    public static let window: Int64 = 60

    /// The ranges to read back from the archive before storing `sorted`
    /// (ascending): one per run of instants (a run ends at a gap of over
    /// an hour), each widened by `window`, with exclusive bounds. A batch
    /// of an export (a few weeks of listening) costs a handful of seeks.
    public static func neighbourhoods(of sorted: [Scrobble]) -> [(above: Int64, below: Int64)] {
        guard let first = sorted.first else { return [] }
        var ranges: [(above: Int64, below: Int64)] = []
        var runStart = first.instant, runEnd = first.instant
        for s in sorted.dropFirst() {
            if s.instant > runEnd.plus(3600) {
                ranges.append((runStart.minus(window), runEnd.plus(window)))
                runStart = s.instant
            }
            runEnd = s.instant
        }
        ranges.append((runStart.minus(window), runEnd.plus(window)))
        return ranges
    }

    /// `scrobbles` in ascending time order (sorting only when needed).
    public static func ascending(_ scrobbles: some Collection<Scrobble>) -> [Scrobble] {
        var sorted = Array(scrobbles)
        if zip(sorted, sorted.dropFirst()).contains(where: { $0.instant > $1.instant }) { sorted.sort { $0.instant < $1.instant } }
        return sorted
    }
}

/// Plays counted per exact spelling (artist and name as written) for
/// several weeks, then merged case-insensitively into ranked charts by
/// `ScrobbleTally.Tally`, so Unicode case folding is Swift's, never a
/// database's. A group's MusicBrainz id is that of its earliest play that
/// has one, and groups reach the tally in that order, so the id a merged
/// group shows is the one a time-ordered `ScrobbleTally` pass would choose.
/// Both stores chart through here.
public struct SpellingCounts: Sendable {
    public let kind: ChartKind
    /// How the person's plays group (their choice).
    public let folding: AlbumFolding
    private var weeks: [[Spelling: Group]]

    public init(kind: ChartKind, weeks: Int, folding: AlbumFolding = .editions) {
        self.kind = kind
        self.folding = folding
        self.weeks = Array(repeating: [:], count: weeks)
    }

    /// One play in week number `week` (an index into the weeks asked for);
    /// `mbid` is read only when this play may decide the group's id.
    public mutating func addPlay(week: Int, artist: String, name: String, instant: Int64, mbid: (() -> String)?) {
        weeks[week][Spelling(artist: artist, name: name), default: Group()].add(instant: instant, mbid: mbid)
    }

    /// `plays` plays of one spelling, already counted; `mbidInstant` is the
    /// time of the earliest of them with an id.
    public mutating func addGroup(week: Int, artist: String, name: String, plays: Int, mbid: String?, mbidInstant: Int64?) {
        let group = Group(plays: plays, mbid: mbid, mbidInstant: mbid == nil ? .max : (mbidInstant ?? .max))
        weeks[week][Spelling(artist: artist, name: name), default: Group()].merge(group)
    }

    /// The ranked chart of each week.
    public func charts(of user: Username, weeks chartWeeks: [ChartWeek]) -> [WeeklyChart] {
        zip(chartWeeks, weeks).map { week, groups in
            var tally = ScrobbleTally.Tally(kind: kind, folding: folding)
            // Only groups with an id need ordering (their earliest play
            // decides whose id a merged group shows); plays add up in any order.
            for (key, group) in groups.sorted(by: { $0.value.mbidInstant < $1.value.mbidInstant }) {
                switch kind {
                case .album: tally.add(artist: key.artist, album: key.name, track: "", mbid: group.mbid, plays: group.plays)
                case .artist: tally.add(artist: key.artist, album: "", track: "", mbid: group.mbid, plays: group.plays)
                case .track: tally.add(artist: key.artist, album: "", track: key.name, mbid: group.mbid, plays: group.plays)
                }
            }
            return WeeklyChart(user: user, kind: kind, week: week, entries: tally.ranked())
        }
    }

    private struct Spelling: Hashable, Sendable {
        let artist: String
        let name: String
    }

    private struct Group: Sendable {
        var plays = 0
        var mbid: String?
        var mbidInstant = Int64.max

        mutating func add(instant: Int64, mbid: (() -> String)?) {
            plays += 1
            if let mbid, instant < mbidInstant {
                self.mbid = mbid()
                mbidInstant = instant
            }
        }

        mutating func merge(_ other: Group) {
            if other.mbidInstant < mbidInstant {
                mbid = other.mbid
                mbidInstant = other.mbidInstant
            }
            plays += other.plays
        }
    }
}

/// An archive that stores a batch on the calling thread, with no wait on
/// Swift's cooperative pool: an import's writer queue uses it when the
/// store offers it (SQLite, whose writes are synchronous anyway).
public protocol BlockingScrobbleWriter: Sendable {
    /// Stores `batch` as `ArchiveWriting.store(_:of:fence:)` does, blocking.
    func storeBlocking(_ batch: [(Scrobble, ScrobbleOrigin)], of user: Username, fence: JobFence?) throws(SourceError) -> InsertCounts
}

/// A page of a person's scrobbles, newest first, and how many there are in
/// the range it was cut from.
public struct RecentScrobbles: Sendable, Equatable {
    public let total: Int
    public let scrobbles: [Scrobble]

    public init(total: Int, scrobbles: [Scrobble]) {
        self.total = total
        self.scrobbles = scrobbles
    }
}

/// What one read of the archive tells a chart page about a person
/// (`ArchiveReading.chartReading`).
public struct ChartReading: Sendable {
    /// The name as the archive stores it, when it holds a scrobble of theirs.
    public var storedName: Username?
    /// Their first and last archived instants (`ArchiveReading.span`).
    public var span: ClosedRange<Int64>?
    /// The end of the demo's generated weeks stored for them, if any.
    public var generatedThrough: Int64?
    /// Their history copy, when it was asked for and there is one.
    public var copy: HistoryCopy?
    /// The chart of the week chosen from `span`; nil when none was chosen.
    public var chart: WeeklyChart?

    public init(storedName: Username? = nil, span: ClosedRange<Int64>? = nil, generatedThrough: Int64? = nil, copy: HistoryCopy? = nil,
                chart: WeeklyChart? = nil) {
        self.storedName = storedName
        self.span = span
        self.generatedThrough = generatedThrough
        self.copy = copy
        self.chart = chart
    }
}
