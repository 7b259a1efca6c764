import Foundation
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// Last.fm's read methods over the archive, at `/2.0/` beside the
/// scrobbling methods, so a tool written for Last.fm (pylast, a statistics
/// site, Vinylogue itself) reads a person archived here with only the
/// server address changed:
///
/// `user.getInfo`, `user.getWeeklyChartList`, `user.getWeekly{Album,Artist,Track}Chart`
/// (from the kept weekly charts), `user.getRecentTracks` (paged, `from` and
/// `to`, what the person's player plays now first), `user.getFriends` (the
/// person's list here) and `album.getInfo` (Last.fm's details when it can
/// be asked, with the person's own play count from the archive).
///
/// Answers are in Last.fm's shapes (`LastFMNode`), XML unless
/// `format=json`, with its error codes. Like Last.fm, every call needs an
/// `api_key` (any value: this server cannot check keys Last.fm gave out).
/// Only people with listens archived here are known; a person whose
/// visibility hides them from the caller (anonymous, or the account of the
/// session key `sk` the call carries) is "User not found", exactly as a
/// name nobody archived.
package struct LastFMReadAPI: Sendable {
    package let archive: any ScrobbleArchive
    package let lists: any ListStore
    /// Accounts, for whose list is a person's (nil without sign-in).
    package let accounts: (any AccountStore)?
    /// Who may see whom, as the web app's `Audiences` holds it now.
    package let visibility: @Sendable () -> VisibilityRules
    package let nowPlaying: NowPlaying
    package let signIn: MobileSignIn
    /// Last.fm's album details, when it can be asked.
    package let albums: any AlbumSource

    package init(archive: any ScrobbleArchive, lists: any ListStore, accounts: (any AccountStore)?, visibility: @escaping @Sendable () -> VisibilityRules, nowPlaying: NowPlaying, signIn: MobileSignIn, albums: any AlbumSource) {
        self.archive = archive
        self.lists = lists
        self.accounts = accounts
        self.visibility = visibility
        self.nowPlaying = nowPlaying
        self.signIn = signIn
        self.albums = albums
    }

    package static let methods: Set<String> = [
        "user.getinfo", "user.getweeklychartlist", "user.getweeklyalbumchart", "user.getweeklyartistchart",
        "user.getweeklytrackchart", "user.getrecenttracks", "user.getfriends", "album.getinfo",
    ]

    package func answer(_ method: String, _ fields: [String: String], _ answer: LastFMAnswer) async -> Response {
        guard let key = fields["api_key"], !key.isEmpty else {
            return answer.error(.invalidAPIKey, "Send an api_key, as Last.fm asks (any value is accepted here).")
        }
        if method == "album.getinfo" { return await albumInfo(fields, answer) }
        guard let raw = fields["user"], !raw.isEmpty else {
            return answer.error(.invalidParameters, "Say whose with `user`.")
        }
        do {
            guard let user = try await shown(raw, fields) else { return answer.notFound("User not found") }
            switch method {
            case "user.getinfo": return answer.ok(try await info(user))
            case "user.getweeklychartlist": return answer.ok(try await chartList(user))
            case "user.getweeklyalbumchart": return try await chart(.album, user, fields, answer)
            case "user.getweeklyartistchart": return try await chart(.artist, user, fields, answer)
            case "user.getweeklytrackchart": return try await chart(.track, user, fields, answer)
            case "user.getrecenttracks": return try await recentTracks(user, fields, answer)
            default: return answer.ok(try await friends(user, fields))
            }
        } catch {
            return answer.error(.temporary, "The archive could not be read; try again in a minute.")
        }
    }

    /// The archived person `raw` names, as the archive spells them, when the
    /// caller may see them; nil for anyone else.
    package func shown(_ raw: String, _ fields: [String: String]) async throws -> Username? {
        guard let asked = Username(validating: raw),
              let user = try await archive.storedName(of: asked) else { return nil }
        let rules = visibility()
        guard rules.isRestricted(user) else { return user }
        return rules.allows(await caller(fields), toSee: user) ? user : nil
    }

    /// The account the call's session key signs in as, if any.
    package func caller(_ fields: [String: String]) async -> Account? {
        guard let key = fields["sk"], !key.isEmpty,
              case .user(let user, let owner)? = try? await signIn.resolve(sessionKey: key), owner != .household else { return nil }
        return Account(id: owner.id, name: user)
    }

    package static func text(_ name: String, _ value: String) -> LastFMNode { LastFMNode(name, text: value) }

    package static func profileURL(_ user: Username) -> String {
        "https://www.last.fm/user/" + (user.value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? user.value)
    }

    package static func musicURL(_ parts: String...) -> String {
        "https://www.last.fm/music/" + parts.map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0 }.joined(separator: "/")
    }

    /// `user.getInfo`: the name, the archive's play count and first listen.
    package func info(_ user: Username) async throws -> LastFMNode {
        let count = try await archive.scrobbleCount(of: user)
        let first = try await archive.span(for: user)?.lowerBound ?? 0
        return LastFMNode("user", children: [
            Self.text("name", user.value), Self.text("realname", ""),
        ] + LastFMNode.images() + [
            Self.text("url", Self.profileURL(user)), Self.text("country", "None"), Self.text("age", "0"), Self.text("gender", "n"),
            Self.text("subscriber", "0"), Self.text("playcount", String(count)), Self.text("playlists", "0"), Self.text("bootstrap", "0"),
            LastFMNode("registered", attributes: [("unixtime", String(first))], text: String(first)), Self.text("type", "user"),
        ])
    }

    /// `user.getWeeklyChartList`: every week from the first listen to the last.
    package func chartList(_ user: Username) async throws -> LastFMNode {
        let weeks = try await ArchiveChartSource(store: archive).chartList(for: user).weeks
        return LastFMNode("weeklychartlist", attributes: [("user", user.value)], lists: ["chart"], children: weeks.map {
            LastFMNode("chart", attributes: [("from", String($0.from)), ("to", String($0.to))], text: "")
        })
    }

    /// A weekly chart: the week `from`–`to` asks for (the latest by default).
    package func chart(_ kind: ChartKind, _ user: Username, _ fields: [String: String], _ answer: LastFMAnswer) async throws -> Response {
        let source = ArchiveChartSource(store: archive)
        let week: ChartWeek
        switch (fields["from"].flatMap { Int64($0) }, fields["to"].flatMap { Int64($0) }) {
        case let (from?, to?) where from < to: week = ChartWeek(from: from, to: to)
        case (nil, nil):
            guard let latest = try await source.chartList(for: user).latest else { return answer.notFound("User not found") }
            week = latest
        default: return answer.error(.invalidParameters, "Give `from` and `to` together, as Unix times with `from` before `to`.")
        }
        let entries = try await source.chart(for: user, kind: kind, week: week).entries
        let element = switch kind { case .album: "album" case .artist: "artist" case .track: "track" }
        let rows = entries.map { entry -> LastFMNode in
            var children: [LastFMNode] = []
            if kind != .artist { children.append(LastFMNode("artist", attributes: [("mbid", "")], text: entry.artist)) }
            children += [Self.text("name", kind == .artist ? entry.artist : entry.name), Self.text("mbid", entry.mbid ?? ""),
                         Self.text("playcount", String(entry.plays))]
            if kind == .track { children += LastFMNode.images() }
            children.append(Self.text("url", entry.url ?? (kind == .artist ? Self.musicURL(entry.artist)
                                                           : Self.musicURL(entry.artist, kind == .album ? entry.name : "_", entry.name))))
            return LastFMNode(element, attributes: [("rank", String(entry.rank))], children: children)
        }
        return answer.ok(LastFMNode("weekly\(element)chart",
                                    attributes: [("user", user.value), ("from", String(week.from)), ("to", String(week.to))],
                                    lists: [element], children: rows))
    }

    /// `user.getRecentTracks`: newest first, `limit` (1–200, 50) a `page`,
    /// between `from` and `to` (Unix times, both included); on the first
    /// page, what the person's player plays now comes first.
    package func recentTracks(_ user: Username, _ fields: [String: String], _ answer: LastFMAnswer) async throws -> Response {
        let limit = fields["limit"].flatMap { Int($0) }.map { min(max($0, 1), 200) } ?? 50
        let page = fields["page"].flatMap { Int($0) }.map { max($0, 1) } ?? 1
        guard page <= 1_000_000 else { return answer.error(.invalidParameters, "`page` is past any history.") }
        let from = fields["from"].flatMap { Int64($0) } ?? 0
        let to = fields["to"].flatMap { Int64($0) }.map { $0 == .max ? $0 : $0 + 1 } ?? .max
        let found = try await archive.recentScrobbles(of: user, from: from, to: to, limit: limit, offset: (page - 1) * limit)
        var rows: [LastFMNode] = []
        if page == 1, let playing = nowPlaying.track(of: user) {
            rows.append(Self.track(artist: playing.artist, name: playing.track, album: playing.album, mbids: (nil, nil, nil), date: nil))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy, HH:mm"
        for scrobble in found.scrobbles {
            let date = LastFMNode("date", attributes: [("uts", String(scrobble.instant))],
                                  text: formatter.string(from: Date(timeIntervalSince1970: TimeInterval(scrobble.instant))))
            rows.append(Self.track(artist: scrobble.artist, name: scrobble.track, album: scrobble.album,
                                   mbids: (scrobble.artistMBID, scrobble.albumMBID, scrobble.trackMBID), date: date))
        }
        let pages = max(1, (found.total + limit - 1) / limit)
        return answer.ok(LastFMNode("recenttracks", attributes: [("user", user.value), ("page", String(page)), ("perPage", String(limit)),
                                                                 ("totalPages", String(pages)), ("total", String(found.total))],
                                    lists: ["track"], children: rows))
    }

    package static func track(artist: String, name: String, album: String, mbids: (String?, String?, String?), date: LastFMNode?) -> LastFMNode {
        var children = [
            LastFMNode("artist", attributes: [("mbid", mbids.0 ?? "")], text: artist), text("streamable", "0"),
        ] + LastFMNode.images() + [
            text("mbid", mbids.2 ?? ""), LastFMNode("album", attributes: [("mbid", mbids.1 ?? "")], text: album),
            text("name", name), text("url", musicURL(artist, "_", name)),
        ]
        if let date { children.append(date) }
        return LastFMNode("track", attributes: date == nil ? [("nowplaying", "true")] : [], children: children)
    }

    /// `user.getFriends`: the person's list here (without them), paged.
    package func friends(_ user: Username, _ fields: [String: String]) async throws -> LastFMNode {
        let owner: ListOwner?
        if let account = try await accounts?.account(named: user) {
            owner = account.owner
        } else if try await lists.owned(by: .household).users().first(where: \.isMe)?.username.key == user.key {
            owner = .household
        } else {
            owner = nil
        }
        var everyone: [ListedUser] = []
        if let owner { everyone = try await lists.owned(by: owner).users() }
        let listed = everyone.filter { $0.key != user.key }
        let limit = fields["limit"].flatMap { Int($0) }.map { min(max($0, 1), 1000) } ?? 50
        let page = fields["page"].flatMap { Int($0) }.map { max($0, 1) } ?? 1
        let shown = listed.dropFirst(min(listed.count, (page - 1) * limit)).prefix(limit)
        return LastFMNode("friends", attributes: [("user", user.value), ("page", String(page)), ("perPage", String(limit)),
                                                  ("totalPages", String(max(1, (listed.count + limit - 1) / limit))), ("total", String(listed.count))],
                          lists: ["user"], children: shown.map { person in
            LastFMNode("user", children: [Self.text("name", person.name), Self.text("realname", "")] + LastFMNode.images() + [
                Self.text("url", Self.profileURL(person.username)), Self.text("country", "None"), Self.text("playcount", "0"),
                Self.text("subscriber", "0"), LastFMNode("registered", attributes: [("unixtime", "0")], text: ""), Self.text("type", "user"),
            ])
        })
    }

    /// `album.getInfo`: Last.fm's details of the album (when it answers),
    /// and, with `username`, that person's plays of it from the archive.
    package func albumInfo(_ fields: [String: String], _ answer: LastFMAnswer) async -> Response {
        guard let artist = fields["artist"], let name = fields["album"], !artist.isEmpty, !name.isEmpty else {
            return answer.error(.invalidParameters, "Send `artist` and `album`.")
        }
        var plays: Int?
        if let raw = fields["username"], !raw.isEmpty {
            do {
                guard let user = try await shown(raw, fields) else { return answer.notFound("User not found") }
                plays = try await archive.albumWeeks(of: user, artist: artist, album: name)?.reduce(0) { $0 + $1.plays } ?? 0
            } catch {
                return answer.error(.temporary, "The archive could not be read; try again in a minute.")
            }
        }
        let detail = try? await albums.album(artist: artist, name: name, mbid: fields["mbid"].flatMap { $0.isEmpty ? nil : $0 }, user: nil)
        if detail == nil && plays == nil { return answer.notFound("Album not found") }
        var children = [
            Self.text("name", detail?.name ?? name), Self.text("artist", detail?.artist ?? artist), Self.text("mbid", detail?.mbid ?? ""),
            Self.text("url", detail?.url ?? Self.musicURL(artist, name)),
        ] + LastFMNode.images { size in detail?.images.first { $0.key.rawValue == size }?.value ?? "" } + [
            Self.text("listeners", String(detail?.listeners ?? 0)), Self.text("playcount", String(detail?.playCount ?? 0)),
        ]
        if let plays { children.append(Self.text("userplaycount", String(plays))) }
        children.append(LastFMNode("tracks", lists: ["track"], children: (detail?.tracks ?? []).map { track in
            LastFMNode("track", attributes: [("rank", String(track.rank))], children: [
                Self.text("name", track.name), Self.text("duration", track.duration.map(String.init) ?? ""),
                Self.text("url", Self.musicURL(artist, "_", track.name)), LastFMNode("artist", children: [Self.text("name", artist)]),
            ])
        }))
        children.append(LastFMNode("tags", lists: ["tag"], children: (detail?.tags ?? []).map { tag in
            LastFMNode("tag", children: [Self.text("name", tag), Self.text("url", "https://www.last.fm/tag/" + (tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? tag))])
        }))
        return answer.ok(LastFMNode("album", children: children))
    }
}
