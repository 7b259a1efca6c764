import Foundation
@testable import HTTPServing
import HummingbirdTesting
import SQLiteStore
import Testing
import VinylogueCore
@testable import Web

/// `/u/{user}/playlist/{N}.xspf` and `.jspf`: the demo's week two years
/// before the harness's clock, against its own generated scrobbles and
/// the chart the same week's JSON gives; the links on the chart page;
/// addresses that name no playlist, a person Last.fm does not know, one
/// charted from Last.fm.
@Suite struct PlaylistRouteTests {
    /// The `<tag>` texts of `xml`, in order, unescaped.
    static func texts(_ tag: String, in xml: String) -> [String] {
        xml.components(separatedBy: "<\(tag)>").dropFirst().compactMap { $0.components(separatedBy: "</\(tag)>").first }.map {
            $0.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    @Test func theDemosWeekTwoYearsAgoAsXSPFAndJSPF() async throws {
        let week = LastFMWeekCalendar.week(containing: Int64(ChartWeekFinder(timeZone: .current).target(yearsAgo: 2, from: july2023)
            .timeIntervalSince1970.rounded(.down)))
        // Independently: each track played from an album that week, once.
        let expected = Set(DemoHistory().scrobbles(in: week).filter { !$0.album.isEmpty }.map { $0.artist.lowercased() + "|" + $0.track.lowercased() })
        try await Harness.run(demo: true) { _, client in
            let chart = try await client.get("/u/demo?years_ago=2")
            #expect(chart.body.contains("<a href=\"/u/demo/playlist/2.xspf\" download>XSPF playlist</a>"), "\(chart.body.prefix(3000))")
            #expect(chart.body.contains("<a href=\"/u/demo/playlist/2.jspf\" download>"))
            #expect(chart.body.contains("<a href=\"/u/demo/playlist/2\">on your music server</a>"))
            // Every year's week, too.
            let history = try await client.get("/u/demo/history")
            #expect(history.body.contains("<a href=\"/u/demo/playlist/2\">play it again</a>"), "\(history.body.prefix(3000))")
            #expect(!(try await client.get("/u/demo/history?kind=artist").body.contains("play it again")))

            let xspf = try await client.get("/u/demo/playlist/2.xspf")
            #expect(xspf.status == .ok)
            #expect(xspf.headers[.contentType] == "application/xspf+xml; charset=utf-8")
            #expect(xspf.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"vinylogue-demo-") == true)
            #expect(xspf.body.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">"))
            let titles = Self.texts("title", in: xspf.body).dropFirst(), creators = Self.texts("creator", in: xspf.body).dropFirst()
            let found = zip(creators, titles).map { $0.0.lowercased() + "|" + $0.1.lowercased() }
            #expect(found.count == expected.count && Set(found) == expected)
            // Albums come in the week's chart order.
            let api = try await client.get("/api/u/demo/chart?week=\(WeekLabels(timeZone: .current).permalinkDay(of: week))")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? [String: Any])
            let order = try #require(json["entries"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            var albums: [String] = []
            for album in Self.texts("album", in: xspf.body) where albums.last != album { albums.append(album) }
            #expect(albums == order)

            let jspf = try await client.get("/u/demo/playlist/2.jspf")
            #expect(jspf.headers[.contentType] == "application/jspf+json; charset=utf-8")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(jspf.body.utf8)) as? [String: Any])
            let tracks = try #require((object["playlist"] as? [String: Any])?["track"] as? [[String: Any]])
            #expect(tracks.count == expected.count)
            #expect((object["playlist"] as? [String: Any])?["title"] as? String == "Vinylogue — this week, 2 years ago")
        }
    }

    @Test func addressesThatNameNoPlaylistAndPeopleWithoutAnArchive() async throws {
        try await Harness.run(demo: true) { _, client in
            for bad in ["/u/demo/playlist/0.xspf", "/u/demo/playlist/2.m3u", "/u/demo/playlist/two.xspf", "/u/demo/playlist/2x",
                        "/u/demo/playlist/99999.xspf", "/u/demo/playlist/2.xspf.jspf"] {
                let answer = try await client.get(bad)
                #expect(answer.status == .badRequest, "\(bad)")
                #expect(answer.body.contains("This address names no playlist"))
            }
            #expect(try await client.get("/u/nosuchuser/playlist/1.xspf").status == .notFound)
            let lastFM = try await client.get("/u/ybsc/playlist/1.xspf")
            #expect(lastFM.status == .conflict)
            #expect(lastFM.body.contains("made from Vinylogue’s own copy of ybsc’s history"))
            #expect(!(try await client.get("/u/ybsc").body.contains("/playlist/")))
            #expect(!(try await client.get("/u/ybsc/history").body.contains("/playlist/")))
            // Long ago, before the demo's history: nothing to play.
            let early = try await client.get("/u/demo/playlist/40.xspf")
            #expect(early.status == .notFound)
            #expect(early.body.contains("played nothing this week 40 years ago"))
        }
    }

    /// The `href` of the link whose text is `text` in `html`, unescaped.
    static func link(_ text: String, in html: String) -> String? {
        guard let end = html.range(of: "\">\(text)</a>") else { return nil }
        let head = html[..<end.lowerBound]
        guard let start = head.range(of: "href=\"", options: .backwards) else { return nil }
        return String(head[start.upperBound...]).replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The albums of an XSPF, each once, in order.
    static func albums(in xspf: String) -> [String] {
        var albums: [String] = []
        for album in texts("album", in: xspf) where albums.last != album { albums.append(album) }
        return albums
    }

    @Test func aYearAnAlbumsLifeAndRediscoverAsPlaylistsFromTheirPages() async throws {
        // Independently: the demo's album listens of 2022 in the harness's zone, ranked as charts rank them.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let start = Int64(calendar.date(from: DateComponents(year: 2022, month: 1, day: 1))!.timeIntervalSince1970)
        let end = Int64(calendar.date(from: DateComponents(year: 2023, month: 1, day: 1))!.timeIntervalSince1970)
        let all = AlbumLifeRouteTests.weeks.flatMap(\.1).filter { !$0.album.isEmpty }
        let year = all.filter { $0.instant >= start && $0.instant < end }
            .sorted { ($0.artistOfAlbum, $0.album, $0.artist, $0.track) < ($1.artistOfAlbum, $1.album, $1.artist, $1.track) }
        var tally = ScrobbleTally.Tally(kind: .album)
        for scrobble in year { tally.add(scrobble) }
        let ranked = tally.ranked()
        let top = try #require(ranked.first)
        let topKey = ScrobbleTally.key(.album, artist: top.artist, album: top.name, track: "")
        func ofTop(_ s: Scrobble) -> Bool { ScrobbleTally.key(.album, artist: s.artistOfAlbum, album: s.album, track: "") == topKey }
        var counted: [String: Int] = [:]
        for s in year where ofTop(s) { counted[s.track.lowercased(), default: 0] += 1 }
        let topTrackPlays = counted
        let everTopTracks = Set(all.filter(ofTop).map { $0.track.lowercased() })
        let topWeeks = Set(all.filter(ofTop).map { LastFMWeekCalendar.week(containing: $0.instant) }).count

        try await Harness.run(demo: true) { _, client in
            // The year.
            let yearPage = try await client.get("/u/demo/year/2022")
            let yearLink = try #require(Self.link("Play the year again", in: yearPage.body), "\(yearPage.body.suffix(4000))")
            #expect(yearLink == "/u/demo/playlist/year-2022")
            let page = try await client.get(yearLink)
            #expect(page.status == .ok)
            #expect(page.body.contains("2022, to play again") && page.body.contains("The year’s \(min(20, ranked.count)) most played albums"))
            #expect(page.body.contains("<a href=\"/u/demo/playlist/year-2022.xspf\" download>XSPF playlist</a>"))
            let xspf = try await client.get("/u/demo/playlist/year-2022.xspf")
            #expect(xspf.status == .ok)
            #expect(xspf.headers[.contentDisposition] == "attachment; filename=\"vinylogue-demo-2022.xspf\"")
            #expect(Self.texts("title", in: xspf.body).first == "Vinylogue — 2022")
            #expect(Self.albums(in: xspf.body) == ranked.prefix(20).map(\.name))
            // The year's #1 album: each track played from it that year, most played first.
            let topTracks = zip(Self.texts("album", in: xspf.body), Self.texts("title", in: xspf.body).dropFirst()).filter { $0.0 == top.name }
                .map { $0.1.lowercased() }
            #expect(Set(topTracks) == Set(topTrackPlays.keys))
            #expect(topTracks.map { topTrackPlays[$0] ?? 0 } == topTracks.map { topTrackPlays[$0] ?? 0 }.sorted(by: >))

            // That album's whole life, from its page.
            let albumPage = try await client.get(Paths.album(DemoHistory.username, artist: top.artist, name: top.name, day: nil))
            let albumLink = try #require(Self.link("Play it again", in: albumPage.body), "\(albumPage.body.suffix(4000))")
            #expect(albumLink.hasPrefix("/u/demo/playlist/album?artist="))
            let albumPlaylist = try await client.get(albumLink)
            #expect(albumPlaylist.body.contains("\(top.name.escapedForHTML), to play again"))
            let albumXSPF = try await client.get(albumLink.replacingOccurrences(of: "/playlist/album?", with: "/playlist/album.xspf?"))
            #expect(albumXSPF.status == .ok)
            #expect(Self.albums(in: albumXSPF.body) == [top.name])
            let lifeTracks = Set(Self.texts("title", in: albumXSPF.body).dropFirst().map { $0.lowercased() })
            if topWeeks <= 52 { #expect(lifeTracks == everTopTracks) } else { #expect(lifeTracks.isSubset(of: everTopTracks) && !lifeTracks.isEmpty) }

            // Rediscover's finds, in its order.
            let rediscover = try await client.get("/u/demo/rediscover")
            let rediscoverLink = try #require(Self.link("Play them again", in: rediscover.body))
            #expect(rediscoverLink == "/u/demo/playlist/rediscover")
            let finds = rediscover.body.components(separatedBy: "<span class=\"album\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
            let rediscoverXSPF = try await client.get("/u/demo/playlist/rediscover.xspf")
            #expect(Self.albums(in: rediscoverXSPF.body).map(\.escapedForHTML) == finds)
            #expect(Self.texts("title", in: rediscoverXSPF.body).first == "Vinylogue — to rediscover")

            // What names nothing, or nothing played.
            for bad in ["year-99", "year-20221", "year-02022", "album", "album?artist=Low", "album?name=HEY%20WHAT", "rediscover.mp3", "years-2022"] {
                let answer = try await client.get("/u/demo/playlist/\(bad)")
                #expect(answer.status == .badRequest, "\(bad)")
                #expect(answer.body.contains("or album with the album’s artist and name"), "\(bad)")
            }
            let never = try await client.get("/u/demo/playlist/album.xspf?artist=Nobody&name=Nothing%20at%20All")
            #expect(never.status == .notFound && never.body.contains("demo never played Nothing at All by Nobody"))
            let before = try await client.get("/u/demo/playlist/year-1990")
            #expect(before.status == .notFound && before.body.contains("demo played no album in 1990"))
            // Someone charted from Last.fm: no links, and the playlists say why.
            #expect(!(try await client.get("/u/ybsc/rediscover").body.contains("Play them again")))
            #expect(try await client.get("/u/ybsc/playlist/year-2022").status == .conflict)
        }
    }

    /// "Make it on ListenBrainz", for the household's "me" who forwards
    /// their listens there: private, the tracks with recording ids, made
    /// again in place; a week without ids and a token ListenBrainz no
    /// longer accepts each a sentence, and nothing saved.
    @Test func aPlaylistOnThePersonsListenBrainzAccountWithTheTokenTheyForwardWith() async throws {
        let week = LastFMWeekCalendar.week(containing: Int64(ChartWeekFinder(timeZone: .current).target(yearsAgo: 2, from: july2023)
            .timeIntervalSince1970.rounded(.down)))
        let ids = ["4a8b0e5c-1b3d-4c2e-9f10-2b3c4d5e6f70", "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"]
        @Sendable func play(_ minute: Int64, _ artist: String, _ album: String, _ track: String, _ mbid: String? = nil) -> Scrobble {
            Scrobble(instant: week.from + minute * 60, artist: artist, album: album, track: track, trackMBID: mbid)
        }
        try await Harness.run { harness, client in
            let rob = try Username("rob")
            try await SQLiteScrobbleStore(database: harness.database).store([
                play(1, "Low", "Things We Lost in the Fire", "Sunflower", ids[0]), play(2, "Low", "Things We Lost in the Fire", "Dinosaur Act"),
                play(3, "Low", "Things We Lost in the Fire", "Sunflower", ids[0]), play(4, "Vetiver", "Tidewater", "Rolling Sea", ids[1]),
                play(5, "Low", "C'mon", "Try to Sleep"),
            ], of: rob, origin: .lastFMExport)
            try await harness.lists.add(rob)
            try await harness.lists.setMe(rob)
            await harness.listenBrainz.accept(token: "rob-token", for: "rob")
            let session = try await client.session()
            #expect(!(try await client.get("/u/rob/playlist/2", session: session).body.contains("Make it on ListenBrainz")))
            let none = try await client.post("/u/rob/playlist/2", ["to": "listenbrainz"], session: session)
            #expect(none.status == .conflict && none.body.contains("Give your ListenBrainz token in Settings"))

            let forwarding = try await client.post("/settings/forwarding", ["listenbrainz-token": "rob-token"], session: session)
            #expect(forwarding.status == .seeOther)
            let page = try await client.get("/u/rob/playlist/2", session: session)
            #expect(page.body.contains("Make it on ListenBrainz (rob)"))
            #expect(!page.body.contains("rob-token"), "the token is never shown")
            // Someone else's page offers nothing.
            #expect(!(try await client.get("/u/ybsc/week/2020-07-08").body.contains("Make it on ListenBrainz")))

            let made = try await client.post("/u/rob/playlist/2", ["to": "listenbrainz"], session: session)
            #expect(made.status == .ok, "\(made.body.suffix(2000))")
            #expect(made.body.contains("Made “Vinylogue — this week, 2 years ago” on ListenBrainz for rob (private): 2 tracks. "
                + "2 tracks without a MusicBrainz recording id left out."), "\(made.body.suffix(3000))")
            let kept = await harness.listenBrainz.playlists()
            #expect(kept.count == 1 && kept.first?.recordings == ids && kept.first?.isPublic == false)
            let again = try await client.post("/u/rob/playlist/2", ["to": "listenbrainz"], session: session)
            #expect(again.body.contains("Replaced “Vinylogue — this week, 2 years ago” on ListenBrainz"))
            #expect(await harness.listenBrainz.playlists().count == 1)
            #expect(try await client.post("/u/rob/playlist/2", ["to": "listenbrainz"], session: session, token: "forged").status == .forbidden)

            // Neither the server nor ListenBrainz: refused, nothing made.
            let bogus = try await client.post("/u/rob/playlist/2", ["to": "bogus"], session: session)
            #expect(bogus.status == .badRequest && bogus.body.contains("Choose where to make it"))
            #expect(await harness.listenBrainz.playlists().count == 1)

            let bare = try await client.post("/u/rob/playlist/album?artist=Low&name=C%27mon", ["to": "listenbrainz"], session: session)
            #expect(bare.status == .unprocessableContent)
            #expect(bare.body.contains("Its track carries no MusicBrainz recording id, which ListenBrainz’s playlists need: nothing was saved."))

            await harness.listenBrainz.revoke(token: "rob-token")
            let revoked = try await client.post("/u/rob/playlist/2", ["to": "listenbrainz"], session: session)
            #expect(revoked.status == .badGateway)
            #expect(revoked.body.contains("ListenBrainz no longer accepts your token: give it again in Settings. Nothing was saved."))
            #expect(await harness.listenBrainz.playlists().count == 1)
        }
    }
}
