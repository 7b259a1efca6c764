import Foundation

/// The JSON shapes Last.fm's API answers in, as the fake writes them:
/// numbers as strings, `#text` and `@attr` keys, and a one-item list
/// written as a bare object. Each answer is a value of one of these types,
/// encoded once (never a `[String: Any]` tree).
enum Wire {
    /// `{"#text": "…", "mbid": "…"}`: an artist or album named inside another object.
    struct Named: Encodable {
        let text: String
        var mbid = ""
        enum CodingKeys: String, CodingKey { case text = "#text", mbid }
    }

    /// `{"size": "large", "#text": "https://…"}`.
    struct Image: Encodable {
        let size: String
        let url: String
        enum CodingKeys: String, CodingKey { case size, url = "#text" }
    }

    /// A list that Last.fm writes as a bare object when it holds exactly one item.
    struct OneOrMany<Item: Encodable>: Encodable {
        let items: [Item]
        /// False writes a list always, as some of Last.fm's answers do.
        let bareWhenSingle: Bool
        init(_ items: [Item], bareWhenSingle: Bool = true) {
            self.items = items
            self.bareWhenSingle = bareWhenSingle
        }
        func encode(to encoder: any Encoder) throws {
            if bareWhenSingle, items.count == 1 { try items[0].encode(to: encoder) } else { try items.encode(to: encoder) }
        }
    }

    /// Paging and owner attributes of a list answer (`@attr`).
    struct ListAttributes: Encodable {
        let user: String
        var page: String? = nil
        var perPage: String? = nil
        var totalPages: String? = nil
        var total: String? = nil
        var from: String? = nil
        var to: String? = nil
    }

    struct Rank: Encodable { let rank: String }

    struct User: Encodable {
        struct Registered: Encodable {
            let unixtime: String
            let text: Int64
            enum CodingKeys: String, CodingKey { case unixtime, text = "#text" }
        }
        let name: String
        var realname = ""
        let playcount: String
        let url: String
        let image: [Image]
        let registered: Registered
        var type = "user"

        init(name: String, playcount: Int, registered: Int64) {
            self.name = name
            self.playcount = String(playcount)
            url = "https://www.last.fm/user/\(name)"
            image = ["small", "medium", "large", "extralarge"].map { Image(size: $0, url: "") }
            self.registered = Registered(unixtime: String(registered), text: registered)
        }
    }

    /// `{"user": {…}}`, the answer to `user.getInfo`.
    struct UserInfo: Encodable { let user: User }

    /// The answer to `user.getFriends`.
    struct Friends: Encodable {
        struct Body: Encodable {
            let user: OneOrMany<User>
            let attributes: ListAttributes
            enum CodingKeys: String, CodingKey { case user, attributes = "@attr" }
        }
        let friends: Body
    }

    /// The answer to `user.getWeeklyChartList`.
    struct ChartList: Encodable {
        struct Week: Encodable {
            var text = ""
            let from: String
            let to: String
            enum CodingKeys: String, CodingKey { case text = "#text", from, to }
        }
        struct Body: Encodable {
            let chart: [Week]
            let attributes: ListAttributes
            enum CodingKeys: String, CodingKey { case chart, attributes = "@attr" }
        }
        let weeklychartlist: Body
    }

    /// One row of a weekly album, artist or track chart (artist charts have no `artist`).
    struct ChartRow: Encodable {
        let attributes: Rank
        let playcount: String
        var mbid = ""
        let name: String
        let url: String
        let artist: Named?
        enum CodingKeys: String, CodingKey { case attributes = "@attr", playcount, mbid, name, url, artist }
    }

    /// The answer to `user.getWeekly{Album,Artist,Track}Chart`:
    /// `{"weeklyalbumchart": {"album": […], "@attr": {…}}}`.
    struct WeeklyChart: Encodable {
        let kind: String
        let rows: OneOrMany<ChartRow>
        let attributes: ListAttributes

        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var outer = encoder.container(keyedBy: Key.self)
            var body = outer.nestedContainer(keyedBy: Key.self, forKey: Key("weekly\(kind)chart"))
            try body.encode(rows, forKey: Key(kind))
            try body.encode(attributes, forKey: Key("@attr"))
        }
    }

    /// One entry of `user.getRecentTracks`; the track playing now has no
    /// `date` and is flagged in `@attr`.
    struct RecentTrack: Encodable {
        struct Played: Encodable {
            let uts: String
            let text: String
            enum CodingKeys: String, CodingKey { case uts, text = "#text" }
        }
        struct NowPlaying: Encodable { let nowplaying = "true" }
        let artist: Named
        let album: Named
        let name: String
        var mbid: String? = ""
        var streamable: String? = "0"
        var url: String? = "https://www.last.fm/music/x"
        var image: [Image] = []
        var date: Played? = nil
        var attributes: NowPlaying? = nil
        enum CodingKeys: String, CodingKey { case artist, album, name, mbid, streamable, url, image, date, attributes = "@attr" }
    }

    /// The answer to `user.getRecentTracks`.
    struct RecentTracks: Encodable {
        struct Body: Encodable {
            let track: [RecentTrack]
            let attributes: ListAttributes
            enum CodingKeys: String, CodingKey { case track, attributes = "@attr" }
        }
        let recenttracks: Body
    }

    /// The answer to `album.getInfo` for an album the fake makes up.
    struct AlbumInfo: Encodable {
        struct Track: Encodable {
            struct Artist: Encodable { let name: String }
            let name: String
            let duration: String
            let attributes: Rank
            let artist: Artist
            enum CodingKeys: String, CodingKey { case name, duration, attributes = "@attr", artist }
        }
        struct Tracks: Encodable { let track: Track }
        struct Wiki: Encodable { let summary: String; let content: String }
        struct Album: Encodable {
            let name: String
            let artist: String
            var mbid = ""
            let url: String
            let image: [Image]
            var listeners = "1234"
            var playcount = "56789"
            let tracks: Tracks
            var tags = ""
            let wiki: Wiki
            var userplaycount: String? = nil
        }
        let album: Album
    }

    /// The answer to `auth.getToken`.
    struct Token: Encodable { let token: String }

    /// The answer to `auth.getSession`.
    struct SessionAnswer: Encodable {
        struct Session: Encodable {
            let name: String
            let key: String
            var subscriber = 0
        }
        let session: Session
    }

    /// Last.fm's error body: `{"error": 6, "message": "…", "links": []}`.
    struct Failure: Encodable {
        let error: Int
        let message: String
        let links: [String] = []
    }

    /// A well-formed answer of a shape no method has (a fault).
    struct Unexpected: Encodable {
        struct Shape: Encodable { let shape = true }
        let unexpected = Shape()
    }
}
