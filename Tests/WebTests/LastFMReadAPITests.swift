import Foundation
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import TestSupport
import Testing
import VinylogueApp
import VinylogueCore

/// Last.fm's read methods over the archive at `/2.0/`: Vinylogue's own
/// Last.fm client, pointed at this server instead of Last.fm, reads a
/// person's archive through them exactly as the archive charts it; a person
/// hidden from the caller is "User not found", as a name nobody archived.
@Suite struct LastFMReadAPITests {
    /// Vinylogue's Last.fm client, asking the app under test (in this
    /// process) instead of Last.fm.
    static func client(for app: some TestClientProtocol, clock: TestClock) -> LastFMClient {
        LastFMClient(configuration: LastFMConfiguration(apiKey: "any-key", baseURL: "http://vinylogue.invalid/2.0/", requestsPerSecond: 1000,
                                                               maxAttempts: 1),
                            transport: transport(to: app), clock: clock.wallClock)
    }

    /// Last.fm's API as the app under test answers it at `/2.0/`, in this process.
    static func transport(to app: some TestClientProtocol) -> LastFMTransport {
        LastFMTransport.inProcess { url, form in
            let path = String(url[(url.range(of: "/2.0/")?.lowerBound ?? url.startIndex)...])
            let response = try? await app.execute(uri: form.map { path + (path.contains("?") ? "&" : "?") + $0 } ?? path, method: .get,
                                                  headers: [:], body: nil)
            return HTTPReply(status: Int(response?.status.code ?? 599), body: Data(buffer: response?.body ?? ByteBuffer()))
        }
    }

    @Test func anotherVinylogueChartsAPersonArchivedHereAsThisOneDoes() async throws {
        try await Harness.run { harness, here in
            let vera = try Username("Vera")
            var listens: [Scrobble] = []
            for i in 0..<12 {
                let album = ["HEY WHAT", "Homogenic", "Blue"][i % 3]
                listens.append(Scrobble(instant: Self.week.from + 3600 + Int64(i) * 900, artist: album == "Blue" ? "Joni Mitchell" : "Low",
                                        album: album, track: "Track \(i % 4)"))
            }
            _ = try await SQLiteScrobbleStore(database: harness.database).store(listens + listens.prefix(5).map {
                Scrobble(instant: $0.instant + 86_400, artist: $0.artist, album: $0.album, track: $0.track)
            }, of: vera, origin: .received)
            // The other instance: LASTFM_API_URL is this one's /2.0/.
            var configuration = VinylogueConfiguration(environment: [:])
            configuration.dataDirectory = Harness.scratch.appendingPathComponent("vinylogue-reader-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: configuration.dataDirectory) }
            configuration.lastFM = LastFMConfiguration(apiKey: "any-key", baseURL: "http://vinylogue-here.invalid/2.0/", requestsPerSecond: 1000,
                                                       maxAttempts: 1, timeout: .seconds(10))
            configuration.copiesHistories = false
            let transports = Transports(lastFM: Self.transport(to: here), images: .inProcess(harness.fake),
                                        listenBrainz: .inProcess(harness.listenBrainz))
            try await Composition.with(configuration, clock: harness.clock.wallClock, transports: transports) { composition in
                try await composition.buildApplication().test(.router) { there in
                    for kind in ChartKind.allCases {
                        let uri = "/api/u/Vera/chart?week=2022-07-12&kind=\(kind.rawValue)"
                        let own = try JSONSerialization.jsonObject(with: Data(buffer: try await here.execute(uri: uri, method: .get, headers: [:], body: nil).body)) as? [String: Any]
                        let read = try JSONSerialization.jsonObject(with: Data(buffer: try await there.execute(uri: uri, method: .get, headers: [:], body: nil).body)) as? [String: Any]
                        func rows(_ json: [String: Any]?) -> [String] {
                            ((json?["entries"] as? [[String: Any]]) ?? []).map { "\($0["rank"] ?? "") \($0["artist"] ?? "") – \($0["name"] ?? "") ×\($0["plays"] ?? "")" }
                        }
                        #expect(!rows(own).isEmpty && rows(read) == rows(own), "\(kind): \(rows(read)) ≠ \(rows(own))")
                        #expect((read?["week"] as? [String: Any])?["from"] as? Int == Int(Self.week.from))
                    }
                    let page = try await there.get("/u/Vera/week/2022-07-12")
                    #expect(page.status == .ok && page.body.containsInOrder(["HEY WHAT", "Homogenic", "Blue"]), "\(page.body.prefix(400))")
                }
            }
        }
    }

    static let week = ChartWeek(from: 1_657_454_400, to: 1_658_059_200)  // 10–17 July 2022, Sunday noon to Sunday noon

    @Test func vinylogueReadsAnArchiveHereThroughLastFMsMethods() async throws {
        try await Harness.run(signIn: true) { harness, app in
            let vera = try Username("Vera")
            let archive = SQLiteScrobbleStore(database: harness.database)
            var listens: [Scrobble] = []
            for i in 0..<7 {
                let low = i < 5
                let instant: Int64 = Self.week.from + 3600 + Int64(i) * 600
                listens.append(Scrobble(instant: instant, artist: low ? "Low" : "Björk", album: low ? "HEY WHAT" : "Homogenic",
                                        track: "Track \(i % 3)", albumMBID: low ? "11111111-2222-3333-4444-555555555555" : nil))
            }
            _ = try await archive.store(listens, of: vera, origin: .received)
            let lastFM = Self.client(for: app, clock: harness.clock)

            let profile = try await lastFM.user(vera)
            #expect(profile.name == vera && profile.playCount == 7)
            let weeks = try await lastFM.chartList(for: vera)
            #expect(weeks.weeks == [Self.week])
            let source = ArchiveChartSource(store: archive)
            for kind in ChartKind.allCases {
                let read = try await lastFM.chart(for: vera, kind: kind, week: Self.week)
                let archived = try await source.chart(for: vera, kind: kind, week: Self.week)
                #expect(read.entries.map { [String($0.rank), $0.artist, $0.name, String($0.plays)] }
                        == archived.entries.map { [String($0.rank), $0.artist, $0.name, String($0.plays)] }, "\(kind)")
            }
            let albums = try await lastFM.chart(for: vera, kind: .album, week: Self.week).entries
            #expect(albums.first?.name == "HEY WHAT" && albums.first?.plays == 5 && albums.count == 2)

            let recent = try await lastFM.recentTracks(of: vera, from: Self.week.from, to: Self.week.to, page: 1, limit: 5)
            #expect(recent.scrobbles.map(\.instant) == listens.map(\.instant).reversed().prefix(5).map { $0 })
            #expect(recent.totalPages == 2)
            let rest = try await lastFM.recentTracks(of: vera, from: Self.week.from, to: Self.week.to, page: 2, limit: 5)
            #expect(rest.scrobbles.map(\.track) == ["Track 1", "Track 0"])
            #expect(rest.scrobbles.last == listens.first)

            let album = try await lastFM.album(artist: "Low", name: "HEY WHAT", mbid: nil, user: vera)
            #expect(album.userPlayCount == 5 && album.name == "HEY WHAT")

            // Nobody archived: Last.fm's "not found".
            await #expect(throws: SourceError.unknownUser(try Username("Nobody1"))) { _ = try await lastFM.user(try Username("Nobody1")) }
        }
    }

    @Test func aHiddenPersonIsAnswerdAsANameNobodyArchived() async throws {
        try await Harness.run(signIn: true) { harness, app in
            await harness.fake.add(user: "Vera", .generated(DemoHistory(seed: 31, start: 1_136_073_600)))
            let archive = SQLiteScrobbleStore(database: harness.database)
            _ = try await archive.store([Scrobble(instant: Self.week.from + 60, artist: "Low", album: "HEY WHAT", track: "White Horses")],
                                        of: try Username("Vera"), origin: .received)
            let browser = try await SignInTests.signIn(app, harness, as: "Vera")
            func body(_ user: String, _ method: String, format: String) async throws -> (HTTPResponse.Status, String) {
                let answer = try await app.execute(uri: "/2.0/?method=\(method)&user=\(user)&api_key=k&format=\(format)", method: .get,
                                                   headers: [:], body: nil)
                return (answer.status, String(buffer: answer.body))
            }
            #expect(try await body("Vera", "user.getinfo", format: "json").0 == .ok)
            try await VisibilityTests.choose(app, .onlyMe, browser)
            for method in ["user.getinfo", "user.getweeklychartlist", "user.getweeklyalbumchart", "user.getrecenttracks", "user.getfriends"] {
                for format in ["json", "xml"] {
                    let hidden = try await body("Vera", method, format: format), unknown = try await body("Nobody1", method, format: format)
                    #expect(hidden.0 == .notFound && hidden == unknown, "\(method) \(format): \(hidden)")
                }
            }
            let album = try await app.execute(uri: "/2.0/?method=album.getinfo&artist=Low&album=HEY%20WHAT&username=Vera&api_key=k&format=json",
                                              method: .get, headers: [:], body: nil)
            #expect(album.status == .notFound && String(buffer: album.body) == #"{"error":6,"message":"User not found"}"#)
        }
    }

    @Test func xmlIsLastFMsAndEscaped() async throws {
        try await Harness.run { harness, app in
            let odd = try Username("Odd")
            _ = try await SQLiteScrobbleStore(database: harness.database).store(
                [Scrobble(instant: Self.week.from + 60, artist: "<script>&\"", album: "A & B", track: "T")], of: odd, origin: .received)
            let answer = try await app.execute(uri: "/2.0/?method=user.getweeklyalbumchart&user=Odd&api_key=k&from=\(Self.week.from)&to=\(Self.week.to)",
                                               method: .get, headers: [:], body: nil)
            let xml = String(buffer: answer.body)
            #expect(answer.status == .ok && answer.headers[.contentType] == "text/xml; charset=utf-8")
            #expect(xml.contains(#"<lfm status="ok"><weeklyalbumchart user="Odd" from="1657454400" to="1658059200"><album rank="1"><artist mbid="">&lt;script&gt;&amp;&quot;</artist><name>A &amp; B</name><mbid/><playcount>1</playcount>"#), "\(xml)")
            #expect(!xml.contains("<script>"))
        }
    }
}
