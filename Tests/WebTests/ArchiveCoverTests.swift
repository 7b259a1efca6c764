import Foundation
import Hummingbird
import HummingbirdTesting
import LastFM
import LastFMTestServer
import SQLiteStore
import Stores
import Sync
import Testing
import VinylogueApp
import VinylogueCore

/// Covers of archived users: resolved once (by `art fetch`, or lazily by
/// the cover route), remembered, and served with Last.fm stopped.
@Suite struct ArchiveCoverTests {
    static let user = try! Username("offliner")
    static let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
    static let paramoreMBID = "0b2345b3-1984-4e96-b60f-427827b9716a"
    /// Artist, album, plays, MusicBrainz id: one by id, the rest by name,
    /// one without art, one with every character a URL or a path dislikes.
    static let albums: [(String, String, Int, String?)] = [
        ("Paramore", "Paramore", 6, paramoreMBID),
        ("AC/DC", "Back \"in\" Black / 🎸 ?x=1#y", 5, nil),
        ("Local Artist", "Offline Album", 4, nil),
        ("No Art", "Blank", 3, nil),
    ]

    /// A fake Last.fm the test can stop, a data directory with `offliner`'s
    /// archive, and the configuration `serve` would read.
    struct Setting {
        let fake: FakeLastFM
        let server: Task<Void, any Error>
        let configuration: VinylogueConfiguration
        let clock: TestClock

        /// Stops the fake Last.fm (API and image host) and waits until it is gone.
        func stopLastFM() async {
            server.cancel()
            _ = await server.result
        }
    }

    static func withSetting(_ body: @Sendable (Setting) async throws -> Void) async throws {
        let clock = TestClock(july2023)
        let fake = try FakeLastFM(clock: clock.wallClock)
        await fake.removeCover(artist: "No Art", album: "Blank")
        let directory = Harness.scratch.appendingPathComponent("vinylogue-covers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var scrobbles: [Scrobble] = []
        for (artist, album, plays, mbid) in albums {
            for n in 0..<plays {
                scrobbles.append(Scrobble(instant: week.from + Int64(scrobbles.count) * 600, artist: artist, album: album, track: "T\(n)",
                                          albumMBID: mbid))
            }
        }
        try await SQLiteScrobbleStore(database: ArchiveDatabase(directory: directory)).store(scrobbles, of: user, origin: .lastFMExport)

        let (urls, continuation) = AsyncStream.makeStream(of: String.self)
        let server = Task { try await FakeLastFMServer.run(fake) { continuation.yield($0) } }
        defer { server.cancel() }
        var iterator = urls.makeAsyncIterator()
        let url = try #require(await iterator.next())
        var configuration = VinylogueConfiguration(environment: [:])
        configuration.dataDirectory = directory
        configuration.lastFM = LastFMConfiguration(apiKey: "test-key", baseURL: url, requestsPerSecond: 200, maxAttempts: 1)
        configuration.imageBase = url.replacingOccurrences(of: "2.0/", with: "i/u/")
        // Patient enough for a test run on a loaded machine (a full run on
        // two busy cores has had the fake's answers take over 10 s).
        configuration.patience = .init(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10), database: .seconds(10))
        try await body(Setting(fake: fake, server: server, configuration: configuration, clock: clock))
    }

    /// Every `<img src>` of a page.
    static func images(in html: String) -> [String] {
        html.components(separatedBy: "<img src=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
            .map { $0.replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&quot;", with: "\"") }
    }

    @Test func afterArtFetchEveryPageShowsCoversWithLastFMStopped() async throws {
        try await Self.withSetting { setting in
            try await Composition.with(setting.configuration, clock: setting.clock.wallClock) { composition in
                let summary = try await composition.archiveCoverFetch(dataDir: nil).run(for: Self.user)
                #expect(summary.found == 3 && summary.noCover == 1 && summary.keptImages == 3 && summary.failures.isEmpty)
                await setting.stopLastFM()

                let app = try await composition.buildApplication()
                try await app.test(.router) { client in
                    // The week's chart: a cover for each album, each served offline.
                    let chart = try await client.get("/u/offliner/week/2020-07-08")
                    #expect(chart.status == .ok)
                    let covers = Self.images(in: chart.body).filter { $0.hasPrefix("/u/offliner/cover/") }
                    #expect(covers.count == 4, "\(Self.images(in: chart.body))")
                    var served: [String] = []
                    for cover in covers {
                        let redirect = try await client.getOnce(cover)
                        #expect(redirect.status == .found)
                        let location = try #require(redirect.headers[.location])
                        served.append(location)
                        guard location.hasPrefix("/art/") else { continue }
                        let image = try await client.getOnce(location)
                        #expect(image.status == .ok, "\(location)")
                        #expect(image.headers[.contentType] == "image/png")
                    }
                    #expect(served.sorted() == [
                        "/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png",
                        FakeLastFM.coverPath(artist: "AC/DC", album: "Back \"in\" Black / 🎸 ?x=1#y"),
                        FakeLastFM.coverPath(artist: "Local Artist", album: "Offline Album"),
                        "/static/placeholder.svg",
                    ].sorted())

                    // The every-year page links the same covers.
                    let history = try await client.get("/u/offliner/history")
                    #expect(Set(Self.images(in: history.body).filter { $0.hasPrefix("/u/offliner/cover/") }) == Set(covers))

                    // The album page names its cover directly, and it is served.
                    let album = try await client.get("/u/offliner/album/AC%2FDC/\(Self.encoded("Back \"in\" Black / 🎸 ?x=1#y"))?week=2020-07-08")
                    let albumCover = FakeLastFM.coverPath(artist: "AC/DC", album: "Back \"in\" Black / 🎸 ?x=1#y")
                    #expect(Self.images(in: album.body).contains(albumCover), "\(album.body)")
                    // Its details are Last.fm's: the page stands on the archive
                    // (the album's life), and says what it cannot load and why.
                    #expect(album.status == .ok)
                    #expect(album.body.contains("In offliner’s listening"))
                    #expect(album.body.containsInOrder(["<dt>Plays</dt>", "5 plays"]))
                    #expect(album.body.contains(ArchivedAlbumWithoutLastFMTests.detailsNote))
                    #expect(album.body.contains("Could not reach Last.fm"))
                    #expect(!album.body.contains("vinylogue "), "a visitor is never told to run a command")
                    #expect(try await client.getOnce(albumCover).status == .ok)
                }
            }
        }
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// Without `art fetch`, the cover route resolves an archived album
    /// itself (once: the answer is remembered, "no cover" too), and with
    /// Last.fm down it answers the placeholder and remembers nothing.
    @Test func theCoverRouteResolvesLazilyAndOnce() async throws {
        try await Self.withSetting { setting in
            try await Composition.with(setting.configuration, clock: setting.clock.wallClock) { composition in
                let app = try await composition.buildApplication()
                try await app.test(.router) { client in
                    let local = "/u/offliner/cover/Local%20Artist/Offline%20Album"
                    let first = try await client.getOnce(local)
                    #expect(first.headers[.location] == FakeLastFM.coverPath(artist: "Local Artist", album: "Offline Album"))
                    let blank = try await client.getOnce("/u/offliner/cover/No%20Art/Blank")
                    #expect(blank.headers[.location] == "/static/placeholder.svg")
                    let asked = await setting.fake.requests().filter { $0.method == "album.getinfo" }.count
                    #expect(asked == 2)
                    _ = try await client.getOnce(local)
                    _ = try await client.getOnce("/u/offliner/cover/no%20art/BLANK")
                    #expect(await setting.fake.requests().filter { $0.method == "album.getinfo" }.count == asked, "remembered, in any case")

                    // Last.fm failing: the placeholder for a short while, and nothing remembered.
                    await setting.fake.inject(FakeLastFM.FaultRule(.httpStatus(503), method: "album.getinfo"))
                    let failing = try await client.getOnce("/u/offliner/cover/Paramore/Paramore?mbid=\(Self.paramoreMBID)")
                    #expect(failing.headers[.location] == "/static/placeholder.svg")
                    #expect(failing.headers[.cacheControl] == "max-age=600")
                    await setting.fake.clearFaults()
                    let working = try await client.getOnce("/u/offliner/cover/Paramore/Paramore?mbid=\(Self.paramoreMBID)")
                    #expect(working.headers[.location] == "/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png")
                }
            }
        }
    }
}
