import Foundation

/// One album as one user heard it: its details, and the user's plays in the
/// week they came from. The presenter of the album page.
public struct AlbumPage: Sendable {
    /// What the body of the page is.
    public enum State: Sendable, Hashable {
        /// The album's details are there.
        case loaded
        /// The source has no such album.
        case missing(message: String)
        /// The source failed, or the user's listening cannot be shown
        /// (a private or unknown profile).
        case failed(SourceError)
    }

    public let user: Username
    public let state: State
    /// The names as the source spells them, else as asked.
    public let artist: String
    public let name: String
    public let detail: AlbumDetail?
    /// The chart week the page was asked from, when the user's list has it.
    public let week: ChartWeek?
    /// "Week 28 · Jul 5 – 12, 2020", or "this week" without a week.
    public let weekLabel: String
    /// The user's plays of this album in `week`, when it is in that week's chart.
    public let weekPlays: Int?
    /// Why the week's play count is missing, when the list or the week's
    /// chart failed for the moment (a reload may bring it).
    public var weekPlaysFailure: SourceError? = nil

    /// Why the page failed, when the state is `.failed`.
    public var failure: SourceError? {
        if case .failed(let error) = state { return error }
        return nil
    }
}

extension AlbumPage {
    /// Which album, for whom, and from which week.
    public struct Request: Sendable {
        public var user: Username
        public var artist: String
        public var name: String
        /// The album's MusicBrainz id, when known.
        public var mbid: String?
        /// A day in the week the album was picked from.
        public var day: Date?
        public var timeZone: TimeZone

        public init(user: Username, artist: String, name: String, mbid: String? = nil, day: Date? = nil, timeZone: TimeZone = .gmt) {
            self.user = user
            self.artist = artist
            self.name = name
            self.mbid = mbid
            self.day = day
            self.timeZone = timeZone
        }
    }

    /// Loads the user's chart list from `charts`, the album's details from
    /// `albums`, and the week's chart for the week's play count.
    ///
    /// A list that fails for good (a private or unknown profile, no API key)
    /// fails the page, as it fails the user's chart; a list that fails for
    /// the moment only costs the week's play count. Source failures become
    /// a `.failed` page, never a thrown error.
    public static func load(_ request: Request, albums: some AlbumSource, charts: some ChartSource) async -> AlbumPage {
        var list: ChartWeekList?
        var listFailure: SourceError?
        do {
            list = try await charts.chartList(for: request.user)
        } catch where !error.isTemporary {
            return build(request, state: .failed(error), detail: nil, week: nil, weekPlays: nil)
        } catch {
            listFailure = error
        }
        let state: State
        var detail: AlbumDetail?
        do {
            detail = try await albums.album(artist: request.artist, name: request.name, mbid: request.mbid, user: request.user)
            state = .loaded
        } catch {
            if case .notFound = error {
                state = .missing(message: "Last.fm has no album called “\(request.name)” by \(request.artist).")
            } else {
                state = .failed(error)
            }
        }
        let week = request.day.flatMap { day in list?.week(containing: day) }
        var weekPlays: Int?
        var weekPlaysFailure = request.day == nil ? nil : listFailure
        if let week {
            do {
                let chart = try await charts.chart(for: request.user, kind: .album, week: week)
                let asked = AlbumIdentity.key(artist: request.artist, album: request.name)
                weekPlays = chart.entries.first { AlbumIdentity.key(artist: $0.artist, album: $0.name) == asked }?.plays
            } catch {
                weekPlaysFailure = error
            }
        }
        var page = build(request, state: state, detail: detail, week: week, weekPlays: weekPlays)
        page.weekPlaysFailure = weekPlaysFailure
        return page
    }

    /// Builds the page from loaded data (pure).
    public static func build(_ request: Request, state: State, detail: AlbumDetail?, week: ChartWeek?, weekPlays: Int?) -> AlbumPage {
        AlbumPage(user: request.user, state: state, artist: detail?.artist ?? request.artist, name: detail?.name ?? request.name,
                  detail: detail, week: week, weekLabel: week.map(WeekLabels(timeZone: request.timeZone).label(for:)) ?? "this week",
                  weekPlays: weekPlays)
    }
}
