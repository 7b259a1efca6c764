import Foundation
import Synchronization

/// Serves the built-in demo's people (`DemoHousehold`) as a chart, album
/// and user source, with no network. Anyone else is not found here.
public struct DemoChartSource: ChartSource, UserSource, AlbumSource {
    private let people: People
    let clock: WallClock

    /// The demo of its five people, generated when first asked about.
    public init(clock: WallClock) {
        people = People(usernames: DemoHousehold.usernames) { DemoHousehold() }
        self.clock = clock
    }

    public init(household: DemoHousehold, clock: WallClock) {
        people = People(usernames: household.members.map(\.username)) { household }
        self.clock = clock
    }

    /// A demo of the demo user alone, with `history`.
    public init(history: DemoHistory, clock: WallClock) {
        self.init(household: DemoHousehold(demo: history), clock: clock)
    }

    /// The demo's people, generated on first use and kept: their
    /// catalogues take milliseconds to make, and every command and test
    /// makes a demo source, most of them never asking it anything.
    public var household: DemoHousehold { people.household }

    /// The demo user's history.
    public var history: DemoHistory { household.demo.history }

    /// Whether `user` is one of this demo's people (by name: nobody's
    /// history is generated to answer).
    public func isMember(_ user: Username) -> Bool { people.usernames.contains(user) }

    /// How the demo spells `user`'s name, when they are one of its people.
    public func memberName(of user: Username) -> Username? { people.usernames.first { $0 == user } }

    /// The household, made once when first needed.
    final class People: Sendable {
        let usernames: [Username]
        private let make: @Sendable () -> DemoHousehold
        private let made = Mutex<DemoHousehold?>(nil)

        init(usernames: [Username], make: @escaping @Sendable () -> DemoHousehold) {
            self.usernames = usernames
            self.make = make
        }

        var household: DemoHousehold {
            made.withLock { made in
                if let household = made { return household }
                let household = make()
                made = household
                return household
            }
        }
    }

    func member(_ user: Username) throws(SourceError) -> DemoHousehold.Member {
        guard let member = household.member(user) else { throw .unknownUser(user) }
        return member
    }

    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        try member(user).history.chartList(now: Int64(clock.now.timeIntervalSince1970))
    }

    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        let member = try member(user)
        return ScrobbleTally.chart(kind, user: member.username, week: week, scrobbles: member.history.scrobbles(in: week))
    }

    public func user(_ user: Username) async throws(SourceError) -> User {
        let member = try member(user)
        return User(name: member.username, realName: member.realName, registered: member.history.firstWeek.fromDate, playCount: 0)
    }

    /// Everyone else in the demo.
    public func friends(of user: Username) async throws(SourceError) -> [User] {
        let asker = try member(user)
        var friends: [User] = []
        for member in household.members where member.username != asker.username {
            friends.append(try await self.user(member.username))
        }
        return friends
    }

    /// The album from `user`'s catalogue (anyone's in the demo when no user
    /// is given), with the tag of that person's taste.
    public func album(artist: String, name: String, mbid: String?, user: Username?) async throws(SourceError) -> AlbumDetail {
        let asked = user.flatMap { household.member($0) }.map { [$0] } ?? household.members
        for member in asked {
            guard let album = member.history.catalog.albums.first(where: {
                $0.artist.lowercased() == artist.lowercased() && $0.name.lowercased() == name.lowercased()
            }) else { continue }
            return AlbumDetail(
                artist: album.artist, name: album.name, mbid: nil, url: nil, images: [:],
                summary: WikiText(paragraphs: [[.text("\(album.name) is an album by \(album.artist), generated for Vinylogue's demo.")]]),
                listeners: 0, playCount: 0, userPlayCount: nil, tags: ["demo", member.history.listening.taste.tag],
                tracks: album.tracks.enumerated().map { AlbumDetail.Track(rank: $0.offset + 1, name: $0.element, duration: nil) })
        }
        throw .notFound(what: "The album “\(name)” by \(artist)")
    }
}

/// An album's life and what was played lately, computed from the generated
/// weeks: the demo's friends are not archived (only `demo` is, at start),
/// and a history of a few hundred weeks is quick to go through for one
/// page. Answers as the archive does for the same history.
extension DemoChartSource: AlbumHistorySource {
    public func albumWeeks(of user: Username, artist: String, album: String) async throws(SourceError) -> [AlbumWeek]? {
        let member = try member(user)
        guard let key = ScrobbleTally.key(.album, artist: artist, album: album, track: "") else { return [] }
        let wantedAlbum = album.lowercased()
        var weeks: [AlbumWeek] = []
        for week in member.history.chartList(now: Int64(clock.now.timeIntervalSince1970)).weeks {
            let scrobbles = member.history.scrobbles(in: week)
            // Most weeks do not play it: look before tallying the week.
            guard scrobbles.contains(where: { $0.album.lowercased() == wantedAlbum }) else { continue }
            let chart = ScrobbleTally.chart(.album, user: member.username, week: week, scrobbles: scrobbles)
            guard let entry = chart.entries.first(where: { ScrobbleTally.key(.album, artist: $0.artist, album: $0.name, track: "") == key })
            else { continue }
            weeks.append(AlbumWeek(week: week, plays: entry.plays, rank: entry.rank, artist: entry.artist, name: entry.name))
        }
        return weeks
    }

    public func albumsPlayed(by user: Username, since from: Int64) async throws(SourceError) -> Set<String>? {
        let member = try member(user)
        var played = Set<String>()
        for week in member.history.chartList(now: Int64(clock.now.timeIntervalSince1970)).weeks where week.from >= from {
            for scrobble in member.history.scrobbles(in: week) {
                if let key = ScrobbleTally.key(.album, artist: scrobble.artistOfAlbum, album: scrobble.album, track: "") { played.insert(key) }
            }
        }
        return played
    }
}
