import Foundation
import Testing
import TestSupport
@testable import MusicServers
import VinylogueCore

@Suite struct SubsonicClientTests {
    static let library = [
        FakeSubsonicLibrary.Album(id: "a1", name: "Abbey Road", artist: "The Beatles", songs: [
            .init(id: "11", title: "Come Together", artist: "The Beatles", album: "Abbey Road", track: 1),
            .init(id: "12", title: "Something", artist: "The Beatles", album: "Abbey Road", track: 2),
            .init(id: "13", title: "Maxwell's Silver Hammer", artist: "The Beatles", album: "Abbey Road", track: 3)]),
        FakeSubsonicLibrary.Album(id: "a2", name: "Abbey Road Live", artist: "Tribute Band", songs: [
            .init(id: "21", title: "Come Together", artist: "Tribute Band", album: "Abbey Road Live", track: 1)]),
        FakeSubsonicLibrary.Album(id: "a3", name: "Tidewater", artist: "Vetiver", songs: [
            .init(id: "31", title: "Rolling Sea", artist: "Vetiver", album: "Tidewater", track: 1),
            .init(id: "32", title: "Wonder Why", artist: "Vetiver", album: "Tidewater", track: 2)]),
    ]

    static func week(yearsAgo: Int = 5) throws -> AlbumPlaylist {
        let week = ChartWeek(from: 1_605_441_600, to: 1_605_441_600 + LastFMWeekCalendar.weekLength)
        func play(_ minute: Int64, _ artist: String, _ album: String, _ track: String) -> Scrobble {
            Scrobble(instant: week.from + minute * 60, artist: artist, album: album, track: track)
        }
        return WeekPlaylist.build(user: try Username("ana"), week: week, yearsAgo: yearsAgo, entries: [
            ChartEntry(rank: 1, artist: "Vetiver", name: "Tidewater (Deluxe Edition)", plays: 3),
            ChartEntry(rank: 2, artist: "The Beatles", name: "Abbey Road (Remastered)", plays: 2),
            ChartEntry(rank: 3, artist: "Lower Dens", name: "Nootropics", plays: 1),
        ], scrobbles: [
            play(1, "Vetiver", "Tidewater (Deluxe Edition)", "A Track Only the Deluxe Has"),
            play(2, "The Beatles", "Abbey Road (Remastered)", "Something (Remastered 2009)"),
            play(3, "The Beatles", "Abbey Road (Remastered)", "Come Together"),
            play(4, "Lower Dens", "Nootropics", "Brains"),
        ]).playlist(labels: WeekLabels(timeZone: .gmt))
    }

    static func client(_ library: FakeSubsonicLibrary, password: String = "s3cret pass") -> SubsonicClient {
        SubsonicClient(account: SubsonicAccount(address: "http://nas.local:4533/music/", username: "ana", password: password)!,
                       transport: library.transport, salt: { "c19b2d" })
    }

    @Test func theWeeksAlbumsAreFoundAsEditionsFoldAndSavedInChartOrder() async throws {
        let library = FakeSubsonicLibrary(albums: Self.library)
        let made = try await ServerPlaylist.save(try Self.week(), on: Self.client(library))
        // Tidewater: its played track is not in the library's edition, so the
        // whole album; Abbey Road: the tracks played, as the library names them
        // ("Something (Remastered 2009)" is not "Something": only Come Together).
        #expect(made.songs.map(\.id) == ["31", "32", "11"])
        #expect(made.found.map(\.name) == ["Tidewater (Deluxe Edition)", "Abbey Road (Remastered)"])
        #expect(made.missing.map(\.name) == ["Nootropics"])
        #expect(!made.replaced)
        #expect(library.playlists.withLock { $0.map(\.name) } == ["Vinylogue — this week, 5 years ago"])
        #expect(library.playlists.withLock { $0.first?.songs } == ["31", "32", "11"])
        // Every call went under the address's own path, signed with a token: the password itself was never sent.
        let forms = library.forms.withLock { $0 }
        #expect(forms.allSatisfy { $0.contains("t=") && $0.contains("s=c19b2d") && !$0.contains("p=") && !$0.contains("s3cret") })

        // Again: the same playlist, replaced, not a second one.
        let again = try await ServerPlaylist.save(try Self.week(), on: Self.client(library))
        #expect(again.replaced)
        #expect(library.playlists.withLock { $0.count } == 1)
    }

    @Test func aServerThatTakesNoTokensIsAskedWithThePassword() async throws {
        let library = FakeSubsonicLibrary(albums: Self.library, takesTokens: false)
        let client = Self.client(library)
        try await client.ping()
        try await client.ping()
        let forms = library.forms.withLock { $0 }
        // Refused once with a token, then the password, and the password from then on.
        #expect(forms.count == 3)
        #expect(forms[0].contains("t=") && forms[1].contains("p=enc%3A") && forms[2].contains("p=enc%3A"))
    }

    @Test func wrongCredentialsAnAnswerThatIsNoSubsonicAndARedirectEachSaySo() async throws {
        let wrong = Self.client(FakeSubsonicLibrary(albums: Self.library), password: "not it")
        await #expect(throws: MusicServerError.wrongCredentials("nas.local:4533")) { try await wrong.ping() }
        let html = SubsonicClient(account: SubsonicAccount(address: "http://nas.local", username: "ana", password: "x")!,
                                  transport: SubsonicTransport { _, _, _ in .init(status: 200, body: Data("<html>router login</html>".utf8)) })
        await #expect(throws: MusicServerError.notSubsonic("nas.local")) { try await html.ping() }
        let moved = SubsonicClient(account: SubsonicAccount(address: "http://nas.local", username: "ana", password: "x")!,
                                   transport: SubsonicTransport { _, _, _ in .init(status: 302, body: Data()) })
        await #expect(throws: MusicServerError.redirected("nas.local")) { try await moved.ping() }
        let refusing = SubsonicClient(account: SubsonicAccount(address: "http://nas.local", username: "ana", password: "x")!,
                                      transport: SubsonicTransport { _, _, _ in FakeSubsonicLibrary.failed(50, "User is not authorized\\nfor the given operation") })
        await #expect(throws: MusicServerError.refused("nas.local", reason: "User is not authorized.")) { try await refusing.ping() }
        // No sentence carries the password.
        #expect(!MusicServerError.wrongCredentials("nas.local:4533").description.contains("x"))
        #expect(!"\(SubsonicAccount(address: "http://nas.local", username: "ana", password: "hunter2")!)".contains("hunter2"))
    }

    @Test func addressesThatAreNotAServersRoot() {
        for bad in ["nas.local:4533", "ftp://nas.local", "http://", "http://user:pw@nas.local", "http://nas.local/?x=1", "javascript:alert(1)"] {
            #expect(SubsonicAccount(address: bad, username: "ana", password: "x") == nil, "\(bad)")
        }
        #expect(SubsonicAccount(address: "https://music.example.org/navidrome/", username: "ana", password: "x")?.address.absoluteString
            == "https://music.example.org/navidrome")
        #expect(SubsonicAccount(address: "http://nas.local", username: "", password: "x") == nil)
    }

    @Test func theSearchIsTheAlbumsNameWithoutItsEdition() {
        #expect(ServerPlaylist.searchQuery("Abbey Road (Remastered)") == "Abbey Road")
        #expect(ServerPlaylist.searchQuery("Abbey Road - 2019 Mix") == "Abbey Road")
        #expect(ServerPlaylist.searchQuery("White Crosses [Limited Edition]") == "White Crosses")
        #expect(ServerPlaylist.searchQuery("Led Zeppelin II") == "Led Zeppelin II")
        #expect(ServerPlaylist.searchQuery("(Deluxe Edition)") == "(Deluxe Edition)")
        #expect(ServerPlaylist.searchQuery("Pt. 1 - The Beginning") == "Pt. 1 - The Beginning")
    }
}

/// What the mpd client writes on a command line, and the accounts it takes.
@Suite struct MPDClientTests {
    @Test func argumentsAreQuotedAsMpdReadsThemAndCannotEndTheCommand() {
        #expect(MPDClient.quoted("Abbey Road") == "\"Abbey Road\"")
        #expect(MPDClient.quoted("Say \"Hi\" \\o/") == "\"Say \\\"Hi\\\" \\\\o/\"")
        #expect(MPDClient.quoted("one\nclear") == "\"one clear\"")
        #expect(MPDClient.number("3/12") == 3 && MPDClient.number("7") == 7 && MPDClient.number(nil) == nil)
    }

    @Test func accounts() {
        #expect(MPDAccount(host: "localhost")?.server == "localhost:6600")
        #expect(MPDAccount(host: "nas", port: 6601, password: "")?.password == nil)
        #expect(MPDAccount(host: "") == nil && MPDAccount(host: "a b") == nil && MPDAccount(host: "nas", port: 0) == nil)
        #expect(!"\(MPDAccount(host: "nas", password: "hunter2")!)".contains("hunter2"))
    }
}
