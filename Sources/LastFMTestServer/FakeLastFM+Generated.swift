import Artwork
import Foundation
import VinylogueCore

extension FakeLastFM {
    /// Answers for a user whose history is generated.
    func generatedAnswer(method: String, _ p: [String: String], name: String, history: DemoHistory) -> FakeReply {
        let now = Int64(clock.now.timeIntervalSince1970)
        let user = try! Username(name)
        switch method {
        case "user.getinfo":
            return .json(Wire.UserInfo(user: Wire.User(name: name, playcount: 1000, registered: history.firstWeek.from)))
        case "user.getfriends":
            let friends = accountsList().filter { $0.lowercased() != name.lowercased() }
            // Like Last.fm, one friend is an object rather than a list.
            return .json(Wire.Friends(friends: .init(
                user: .init(friends.map { Wire.User(name: $0, playcount: 0, registered: 1_200_000_000) }),
                attributes: .init(user: name, page: "1", perPage: "50", totalPages: "1", total: String(friends.count)))))
        case "user.getweeklychartlist":
            return chartList(history.chartList(now: now).weeks, user: name)
        case "user.getweeklyalbumchart", "user.getweeklyartistchart", "user.getweeklytrackchart":
            guard let from = p["from"].flatMap(Int64.init), let to = p["to"].flatMap(Int64.init) else {
                return .error(6, "Invalid parameters")
            }
            let kind: ChartKind = method.contains("album") ? .album : method.contains("artist") ? .artist : .track
            var scrobbles: [Scrobble] = []
            var week = LastFMWeekCalendar.week(containing: from)
            while week.from < to {
                scrobbles += history.scrobbles(in: week)
                week = ChartWeek(from: week.to, to: week.to + LastFMWeekCalendar.weekLength)
            }
            let chart = ScrobbleTally.chart(kind, user: user, week: ChartWeek(from: from, to: to), scrobbles: scrobbles)
            let rows = chart.entries.map { e in
                Wire.ChartRow(attributes: .init(rank: String(e.rank)), playcount: String(e.plays), name: e.name,
                              url: "https://www.last.fm/music/\(e.artist)", artist: kind == .artist ? nil : .init(text: e.artist))
            }
            // Like Last.fm, a one-row chart is an object rather than a list.
            return .json(Wire.WeeklyChart(kind: kind.rawValue, rows: .init(rows),
                                          attributes: .init(user: name, from: String(from), to: String(to))))
        case "user.getrecenttracks":
            return recentTracks(p, name: name, history: history, now: now)
        default:
            return .error(3, "Invalid Method - No method with that name in this package", status: 400)
        }
    }

    func recentTracks(_ p: [String: String], name: String, history: DemoHistory, now: Int64) -> FakeReply {
        let limit = min(200, max(1, p["limit"].flatMap(Int.init) ?? 50))
        let page = max(1, p["page"].flatMap(Int.init) ?? 1)
        let from = p["from"].flatMap(Int64.init) ?? history.firstWeek.from
        let to = min(p["to"].flatMap(Int64.init) ?? now, now)
        // Newest first, like Last.fm; made once for a walk's fixed bounds
        // (a copy asks for every page of the same listing).
        let key = "\(name.lowercased())|\(from)|\(to)|\(lateScrobbles[name.lowercased()]?.count ?? 0)"
        let all: [Scrobble]
        if let listed = recentListings[key] {
            all = listed
        } else {
            var made: [Scrobble] = []
            var week = LastFMWeekCalendar.week(containing: max(from, history.firstWeek.from))
            while week.from <= to {
                made += history.scrobbles(in: week).filter { $0.instant >= from && $0.instant <= to }
                week = ChartWeek(from: week.to, to: week.to + LastFMWeekCalendar.weekLength)
            }
            made += (lateScrobbles[name.lowercased()] ?? []).filter { $0.instant >= from && $0.instant <= to }
            made.sort { $0.instant > $1.instant }
            if recentListings.count >= 16 { recentListings.removeAll() }
            recentListings[key] = made
            all = made
        }
        let totalPages = (all.count + limit - 1) / limit
        let slice = all.dropFirst((page - 1) * limit).prefix(limit)
        var tracks = slice.map { s in
            Wire.RecentTrack(artist: .init(text: s.artist), album: .init(text: s.album), name: s.track,
                             date: .init(uts: String(s.instant), text: "\(s.instant)"))
        }
        if page == 1, p["to"] == nil {
            // The track playing right now: no date, flagged, and not a scrobble.
            tracks.insert(Wire.RecentTrack(artist: .init(text: "Now Playing Artist"), album: .init(text: "Live"), name: "Right Now",
                                           mbid: nil, streamable: nil, url: nil, attributes: .init()), at: 0)
        }
        return .json(Wire.RecentTracks(recenttracks: .init(
            track: tracks,
            attributes: .init(user: name, page: String(page), perPage: String(limit), totalPages: String(totalPages), total: String(all.count)))))
    }

    func accountsList() -> [String] { knownNames() }

    func albumInfo(_ p: [String: String]) -> FakeReply {
        let artist = p["artist"]?.lowercased(), album = p["album"]?.lowercased(), mbid = p["mbid"]
        if mbid == "0b2345b3-1984-4e96-b60f-427827b9716a" || (artist == "paramore" && album == "paramore") {
            return .raw(fixtures.albumInfo)
        }
        guard let artistName = p["artist"], let albumName = p["album"], !artistName.isEmpty, !albumName.isEmpty else {
            return .error(6, "Album not found", status: 404)
        }
        // Any other album exists, with a generated description (and a
        // generated cover, unless `removeCover` took it away).
        let key = artistName.lowercased() + "\u{1F}" + albumName.lowercased()
        let made = Wire.AlbumInfo.Album(
            name: albumName, artist: artistName, url: "https://www.last.fm/music/\(artistName)/\(albumName)",
            image: coverless.contains(key) ? Self.noImages : Self.images(hash: NameHash(key).hex),
            tracks: .init(track: .init(name: "Only Track", duration: "200", attributes: .init(rank: "1"), artist: .init(name: artistName))),
            wiki: .init(summary: "\(albumName) is an album by \(artistName). <a href=\"https://www.last.fm/music/x\">Read more on Last.fm</a>", content: ""),
            userplaycount: p["username"] == nil ? nil : "7")
        return .json(Wire.AlbumInfo(album: made))
    }
}

extension FakeLastFM {
    static let imageSizes = [("small", "34s"), ("medium", "64s"), ("large", "174s"), ("extralarge", "300x300")]

    /// What Last.fm sends for an album without art: every size, no URL.
    static var noImages: [Wire.Image] { imageSizes.map { Wire.Image(size: $0.0, url: "") } + [Wire.Image(size: "mega", url: "")] }

    /// The cover an album answered with by name (`album.getinfo` with
    /// `artist` and `album`): the address Vinylogue serves it under.
    public static func coverPath(artist: String, album: String) -> String {
        "/art/300x300/\(NameHash(artist.lowercased() + "\u{1F}" + album.lowercased()).hex).png"
    }

    /// Image URLs in Last.fm's shape for an album whose art has `hash`.
    static func images(hash: String) -> [Wire.Image] {
        imageSizes.map { Wire.Image(size: $0.0, url: "https://lastfm.freetls.fastly.net/i/u/\($0.1)/\(hash).png") }
    }

    /// The image Last.fm's host would serve at `/i/u/{size}/{file}`: a
    /// generated cover for any 32-hex name.
    func image(size: String, file: String) -> Data? {
        let hash = file.split(separator: ".").first.map(String.init) ?? ""
        guard hash.count == 32, hash.allSatisfy(\.isHexDigit) else { return nil }
        imageLog.append(file)
        return try? GeneratedCover(artist: hash, album: size).pngData()
    }
}
