import Foundation
import VinylogueCore

// The wire format of each method this client calls, and its conversion to
// VinylogueCore values. Nothing here leaves the module.

struct RawUser: Decodable, Sendable {
    let name: LenientString
    let realname: LenientString?
    let image: OneOrMany<RawImage>?
    let registered: Registered?
    let playcount: LenientInt?
    let url: LenientString?

    struct Registered: Decodable, Sendable {
        let unixtime: LenientString?
        enum CodingKeys: String, CodingKey { case unixtime, text = "#text" }
        init(from decoder: any Decoder) throws {
            if let plain = try? LenientString(from: decoder) { unixtime = plain; return }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let unix = try c.decodeIfPresent(LenientString.self, forKey: .unixtime)
            let text = try c.decodeIfPresent(LenientString.self, forKey: .text)
            unixtime = unix ?? text
        }
    }

    func value() throws(SourceError) -> User {
        guard let name = Username(validating: name.value) else {
            throw .malformedResponse(detail: "a user without a valid name")
        }
        let images = RawImage.bySize(image?.items ?? [])
        let registered = registered?.unixtime.flatMap { TimeInterval($0.value) }.map(Date.init(timeIntervalSince1970:))
        return User(name: name, realName: realname?.value, imageURL: images[.large] ?? images.values.first,
                    registered: registered, playCount: playcount?.value ?? 0, url: url?.value)
    }
}

struct UserInfoResponse: Decodable, Sendable { let user: RawUser }

struct FriendsResponse: Decodable, Sendable {
    let friends: Body
    struct Body: Decodable, Sendable {
        let user: OneOrMany<RawUser>?
        let attr: PageAttr?
        enum CodingKeys: String, CodingKey { case user, attr = "@attr" }
    }
}

struct ChartListResponse: Decodable, Sendable {
    let weeklychartlist: Body
    struct Body: Decodable, Sendable {
        let chart: OneOrMany<Week>?
    }
    struct Week: Decodable, Sendable {
        let from: LenientString
        let to: LenientString
    }

    func value() throws(SourceError) -> ChartWeekList {
        var weeks: [ChartWeek] = []
        for w in weeklychartlist.chart?.items ?? [] {
            guard let from = Int64(w.from.value), let to = Int64(w.to.value) else {
                throw .malformedResponse(detail: "a chart week with bounds “\(w.from.value)” and “\(w.to.value)”")
            }
            weeks.append(ChartWeek(from: from, to: to))
        }
        return ChartWeekList(weeks)
    }
}

/// One row of any weekly chart (album, artist or track).
struct RawChartRow: Decodable, Sendable {
    let name: LenientString
    let artist: TextNode?
    let mbid: LenientString?
    let playcount: LenientInt?
    let url: LenientString?
    let attr: RankAttr?
    enum CodingKeys: String, CodingKey { case name, artist, mbid, playcount, url, attr = "@attr" }
}

struct WeeklyChartResponse: Decodable, Sendable {
    let rows: [RawChartRow]

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let root = try decoder.container(keyedBy: Key.self)
        guard let bodyKey = root.allKeys.first(where: { $0.stringValue.hasPrefix("weekly") }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no weekly chart in the response"))
        }
        let body = try root.nestedContainer(keyedBy: Key.self, forKey: bodyKey)
        let listKey = body.allKeys.first { ["album", "artist", "track"].contains($0.stringValue) }
        rows = try listKey.map { try body.decode(OneOrMany<RawChartRow>.self, forKey: $0).items } ?? []
    }

    func value(user: Username, kind: ChartKind, week: ChartWeek) -> WeeklyChart {
        let entries = rows.enumerated().map { index, row in
            let artist = kind == .artist ? row.name.value : (row.artist?.text ?? "")
            return ChartEntry(rank: row.attr?.rank?.value ?? index + 1, artist: artist, name: row.name.value,
                              plays: row.playcount?.value ?? 0, mbid: row.mbid?.value, url: row.url?.value)
        }
        return WeeklyChart(user: user, kind: kind, week: week, entries: entries)
    }
}

struct AlbumInfoResponse: Decodable, Sendable {
    let album: Body
    struct Body: Decodable, Sendable {
        let name: LenientString
        let artist: TextNode
        let mbid: LenientString?
        let url: LenientString?
        let image: OneOrMany<RawImage>?
        let listeners: LenientInt?
        let playcount: LenientInt?
        let userplaycount: LenientInt?
        let tracks: Tracks?
        let tags: Tags?
        let wiki: Wiki?
    }
    struct Tracks: Decodable, Sendable {
        let track: OneOrMany<Track>?
        init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self), text.isEmpty { track = nil; return }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            track = try c.decodeIfPresent(OneOrMany<Track>.self, forKey: .track)
        }
        enum CodingKeys: String, CodingKey { case track }
    }
    struct Track: Decodable, Sendable {
        let name: LenientString
        let duration: LenientInt?
        let attr: RankAttr?
        enum CodingKeys: String, CodingKey { case name, duration, attr = "@attr" }
    }
    struct Tags: Decodable, Sendable {
        let tag: OneOrMany<Tag>?
        init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self), text.isEmpty { tag = nil; return }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            tag = try c.decodeIfPresent(OneOrMany<Tag>.self, forKey: .tag)
        }
        enum CodingKeys: String, CodingKey { case tag }
    }
    struct Tag: Decodable, Sendable { let name: LenientString }
    struct Wiki: Decodable, Sendable {
        let summary: LenientString?
        let content: LenientString?
    }

    func value() -> AlbumDetail {
        let tracks = (album.tracks?.track?.items ?? []).enumerated().map { index, t in
            AlbumDetail.Track(rank: t.attr?.rank?.value ?? index + 1, name: t.name.value, duration: t.duration?.value)
        }
        let summary = album.wiki?.summary.flatMap { WikiText.parse(html: $0.value) }
        return AlbumDetail(
            artist: album.artist.text, name: album.name.value, mbid: album.mbid?.value, url: album.url?.value,
            images: RawImage.bySize(album.image?.items ?? []), summary: summary,
            listeners: album.listeners?.value ?? 0, playCount: album.playcount?.value ?? 0,
            userPlayCount: album.userplaycount?.value, tags: (album.tags?.tag?.items ?? []).map(\.name.value),
            tracks: tracks)
    }
}

struct RecentTracksResponse: Decodable, Sendable {
    let recenttracks: Body
    struct Body: Decodable, Sendable {
        let track: OneOrMany<Track>?
        let attr: PageAttr?
        enum CodingKeys: String, CodingKey { case track, attr = "@attr" }
    }
    struct Track: Decodable, Sendable {
        let name: LenientString
        let artist: TextNode
        let album: TextNode?
        let mbid: LenientString?
        let date: DateNode?
        let attr: NowPlaying?
        enum CodingKeys: String, CodingKey { case name, artist, album, mbid, date, attr = "@attr" }
    }
    struct DateNode: Decodable, Sendable { let uts: LenientString? }
    struct NowPlaying: Decodable, Sendable { let nowplaying: LenientString? }

    func value() -> ScrobblePage {
        let scrobbles = (recenttracks.track?.items ?? []).compactMap { t -> Scrobble? in
            // The now-playing track has no date and is not a scrobble yet.
            if t.attr?.nowplaying?.value == "true" { return nil }
            guard let uts = t.date?.uts.flatMap({ Int64($0.value) }) else { return nil }
            return Scrobble(instant: uts, artist: t.artist.text, album: t.album?.text ?? "", track: t.name.value,
                            artistMBID: t.artist.mbid, albumMBID: t.album?.mbid, trackMBID: t.mbid?.value)
        }
        let attr = recenttracks.attr
        return ScrobblePage(scrobbles: scrobbles, page: attr?.page?.value ?? 1,
                            totalPages: attr?.totalPages?.value ?? 1, total: attr?.total?.value ?? scrobbles.count)
    }
}

/// `{"session": {"name": "RJ", "key": "…", "subscriber": 0}}`.
struct SessionResponse: Decodable {
    struct Session: Decodable {
        let name: String
        let key: String
    }
    let session: Session
}

/// A signed-in Last.fm account: its name and the session key that lets this
/// server act for it. The key is a secret: it is never shown, logged or
/// printed (`description` leaves it out).
public struct LastFMSession: Sendable, Hashable, CustomStringConvertible {
    public let name: Username
    public let key: String

    public init(name: Username, key: String) {
        self.name = name
        self.key = key
    }

    public var description: String { "LastFMSession(\(name), key: <hidden>)" }
}
