import AsyncHTTPClient
import Foundation
import Hummingbird
import LocalTestServer
import NIOCore
import Synchronization
import Testing
import TestSupport
@testable import MusicServers

/// What a hostile probe of the music servers found (session 27), each
/// fixed: a port past 65535 crashed the process; a server that sent its
/// headers and then dripped its body held a request for ever; mpd at an
/// IPv6 address could not be given; control characters of a server's
/// message reached the page; a web server answering 400 was sent the
/// password; 6to4 and IPv4-translated addresses passed as public.
@Suite struct ProbeFindingTests {
    @Test func portsPastTheLastAreNoAddress() {
        #expect(SubsonicAccount(address: "http://127.0.0.1:99999", username: "a", password: "b") == nil)
        #expect(SubsonicAccount(address: "http://127.0.0.1:65536", username: "a", password: "b") == nil)
        #expect(SubsonicAccount(address: "http://127.0.0.1:65535", username: "a", password: "b") != nil)
        #expect(SubsonicAccount(address: "http://[::1]:4533", username: "a", password: "b")?.server == "[::1]:4533")
    }

    @Test func mpdAtIPv6AddressesAndPorts() {
        #expect(MPDAccount(address: "[::1]:6620")?.host == "::1" && MPDAccount(address: "[::1]:6620")?.port == 6620)
        #expect(MPDAccount(address: "[::1]")?.port == 6600 && MPDAccount(address: "[::1]")?.server == "[::1]:6600")
        #expect(MPDAccount(address: "::1")?.host == "::1" && MPDAccount(address: "::1")?.port == 6600)
        #expect(MPDAccount(address: "nas.lan:6601")?.port == 6601 && MPDAccount(address: "nas.lan")?.port == 6600)
        for bad in ["[::1", "[::1]x", "[::1]:99999", "nas.lan:x", "", "nas lan"] { #expect(MPDAccount(address: bad) == nil, "\(bad)") }
    }

    @Test func aServersMessageLosesItsControlAndFormatCharacters() {
        #expect(SubsonicClient.sentence("<b>x</b>\u{202E}\u{0}evil") == "<b>x</b>evil.")
    }

    @Test func embeddedPrivateAddressesAreNotPublic() async {
        let policy = MusicServerPolicy(allowed: []) { _ in [] }
        for host in ["2002:7f00:1::1", "::ffff:0:7f00:1", "2002:c0a8:101::"] { #expect(await policy.refusal(of: host) != nil, "\(host)") }
        #expect(await policy.refusal(of: "2002:5db8:d822::1") == nil)
    }

    @Test func aWebServerAnswering400IsNeverSentThePassword() async {
        let forms = Mutex<[String]>([])
        let client = SubsonicClient(account: SubsonicAccount(address: "http://router.test", username: "ana", password: "secret pw")!,
                                    transport: SubsonicTransport { _, form, _ in
                                        forms.withLock { $0.append(form) }
                                        return .init(status: 400, body: Data("<html>Bad Request</html>".utf8))
                                    })
        await #expect(throws: MusicServerError.notSubsonic("router.test")) { try await client.ping() }
        #expect(forms.withLock { $0.count } == 1)
        #expect(forms.withLock { $0.allSatisfy { !$0.contains("p=") } })
    }

    /// A server that answers its headers at once, then a space every 0.1 s.
    static func dripping() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("rest/ping.view") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json", .contentLength: "100000"], body: ResponseBody { writer in
                while !Task.isCancelled {
                    try await writer.write(ByteBuffer(string: " "))
                    try await Task.sleep(for: .milliseconds(100))
                }
            })
        }
        return router
    }

    @Test func aServerThatDripsItsBodyIsCutOffAtTheDeadline() async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        try await LocalServer.withRunning({ onRunning in
            try await LocalServer.run(Self.dripping(), name: "drip", host: "127.0.0.1", port: 0) { await onRunning("http://127.0.0.1:\($0)") }
        }) { root in
            let client = SubsonicClient(account: SubsonicAccount(address: root, username: "ana", password: "x")!,
                                        transport: .live(http, timeout: .seconds(1)))
            let started = ContinuousClock.now
            await #expect(throws: MusicServerError.self) { try await client.ping() }
            #expect(ContinuousClock.now - started < .seconds(5), "cut off at its deadline, not when the body ends")
        }
        try await http.shutdown()
    }

    /// A library whose searches each wait until they are cancelled (a
    /// server answering every lookup just under its limit, for ever): the
    /// whole playlist's budget ends the match, every lookup cancelled.
    final class StalledLibrary: MusicLibrary {
        let server = "slow.example:4533"
        let cancelled = Mutex(0)
        func ping() async throws(MusicServerError) {}
        func albums(named query: String) async throws(MusicServerError) -> [LibraryAlbum] {
            let (stream, _) = AsyncStream.makeStream(of: Void.self)
            await withTaskCancellationHandler {
                for await _ in stream {}
            } onCancel: {
                cancelled.withLock { $0 += 1 }
            }
            return []
        }
        func songs(of album: LibraryAlbum) async throws(MusicServerError) -> [LibrarySong] { [] }
        func savePlaylist(name: String, songs: [LibrarySong]) async throws(MusicServerError) -> Bool { Issue.record("saved"); return false }
    }

    @Test func aServerSlowOverAWholeWeekIsStoppedAtThePlaylistsBudget() async throws {
        let library = StalledLibrary()
        let playlist = try SubsonicClientTests.week()
        await #expect(throws: MusicServerError.tooSlow("slow.example:4533", albums: 3, seconds: 0)) {
            _ = try await ServerPlaylist.save(playlist, on: library, within: .milliseconds(50))
        }
        #expect(library.cancelled.withLock { $0 } == 3, "every lookup under way was cancelled")
        #expect(MusicServerError.tooSlow("nas:4533", albums: 100, seconds: 60).description
            == "nas:4533 took longer than 60 seconds to find the 100 albums. Try again when it is less busy.")
    }

    /// A ping answered as Subsonic answers it, and the Host it was asked for.
    final class Hosts: Sendable {
        let seen = Mutex<[String]>([])
    }

    static func answering(_ hosts: Hosts) -> Router<BasicRequestContext> {
        let router = Router()
        router.post("rest/ping.view") { request, _ -> Response in
            hosts.seen.withLock { $0.append(request.head.authority ?? "") }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: #"{"subsonic-response":{"status":"ok","version":"1.16.1"}}"#)))
        }
        return router
    }

    /// DNS rebinding: the name is looked up once, by the policy, and every
    /// connection goes to the address it checked. Here the name cannot be
    /// looked up at all (`.invalid`), so only a connection to the checked
    /// address reaches the server; the request still names the host.
    @Test func connectionsGoToTheAddressThePolicyCheckedNotToANewLookUp() async throws {
        let hosts = Hosts()
        try await LocalServer.withRunning({ onRunning in
            try await LocalServer.run(Self.answering(hosts), name: "pinned", host: "127.0.0.1", port: 0) { await onRunning("\($0)") }
        }) { port in
            let account = SubsonicAccount(address: "http://music.rebind.invalid:\(port)", username: "ana", password: "x")!
            let pinned = MusicServerAccess.livePinned(account, "127.0.0.1")
            try await pinned.client.ping()
            await pinned.close()
            #expect(hosts.seen.withLock { $0 } == ["music.rebind.invalid:\(port)"])
            // Unpinned, the same name reaches nothing.
            let http = SubsonicTransport.makeHTTPClient()
            await #expect(throws: MusicServerError.unreachable("music.rebind.invalid:\(port)")) {
                try await SubsonicClient(account: account, transport: .live(http)).ping()
            }
            try await http.shutdown()
        }
    }

    /// The access hands each library the address the policy checked: a
    /// pinned Subsonic client (closed after) and an mpd account pinned to
    /// it; an address or a name the operator listed is reached as given.
    @Test func theAccessPinsEachLibraryToTheCheckedAddress() async throws {
        let policy = MusicServerPolicy(allowed: ["nas.lan"], resolve: { host in host == "music.example" ? ["93.184.216.34", "2606:2800:220:1::"] : [] })
        let pins = Mutex<[String]>([]), closed = Mutex(0)
        let nowhere = SubsonicTransport { _, _, server throws(MusicServerError) in throw .unreachable(server) }
        let access = MusicServerAccess(policy: policy, subsonic: { SubsonicClient(account: $0, transport: nowhere) }, pinnedSubsonic: { account, address in
            pins.withLock { $0.append(address) }
            return (SubsonicClient(account: account, transport: nowhere), { closed.withLock { $0 += 1 } })
        })
        let subsonic = try MusicServerAccess.Server.parse(kind: "subsonic", address: "https://music.example", username: "ana", password: "x").get()
        let seen = await access.withLibrary(subsonic) { $0.server }
        #expect(try seen.get() == "music.example")
        #expect(pins.withLock { $0 } == ["93.184.216.34"] && closed.withLock { $0 } == 1)
        let mpd = try MusicServerAccess.Server.parse(kind: "mpd", address: "music.example:6601", username: nil, password: nil).get()
        let pinnedMPD = await access.withLibrary(mpd) { ($0 as? MPDClient)?.account.pinnedAddress }
        #expect(try pinnedMPD.get() == "93.184.216.34")
        for (kind, address) in [("mpd", "nas.lan:6600"), ("subsonic", "http://8.8.8.8:4533")] {
            let server = try MusicServerAccess.Server.parse(kind: kind, address: address, username: "ana", password: "x").get()
            let pin = await access.withLibrary(server) { ($0 as? MPDClient)?.account.pinnedAddress ?? "none" }
            #expect(try pin.get() == "none", "\(address)")
        }
        #expect(pins.withLock { $0.count } == 1, "an address or a listed name is not pinned")
        let inside = try MusicServerAccess.Server.parse(kind: "subsonic", address: "http://10.0.0.5", username: "ana", password: "x").get()
        #expect(await access.check(inside)?.sentence.contains("is on a private network (10.0.0.5)") == true)
    }

    /// What the second probe found (session 28): mpd keeps a playlist as a
    /// file, so a "/" in its name ("Either/Or") is refused; a Teredo
    /// address hides an IPv4 one.
    @Test func mpdNamesAndTeredoAddresses() {
        #expect(MPDClient.storedName("Vinylogue — Either/Or\nagain") == "Vinylogue — Either∕Or again")
        #expect(MPDClient.storedName("Vinylogue — 2019") == "Vinylogue — 2019")
        #expect(!MusicServerPolicy.isPublic("2001:0:4136:e378:8000:63bf:80ff:fffe"))
        #expect(MusicServerPolicy.isPublic("2001:4860:4860::8888"))
    }

    /// Another user's public playlist of the same name is listed too: it
    /// is not the one replaced.
    @Test func onlyTheUsersOwnPlaylistIsReplaced() async throws {
        let forms = Mutex<[String]>([])
        let client = SubsonicClient(account: SubsonicAccount(address: "http://nas.test", username: "ana", password: "pw")!,
                                    transport: SubsonicTransport { url, form, _ in
            forms.withLock { $0.append(url.lastPathComponent + "?" + form) }
            let lists = #"{"playlist":[{"id":"p0","name":"Vinylogue — this week, 5 years ago","owner":"someoneelse"}]}"#
            return .init(status: 200, body: Data(#"{"subsonic-response":{"status":"ok","version":"1.16.1","playlists":\#(lists)}}"#.utf8))
        })
        let song = LibrarySong(id: "s1", title: "T", artist: "A", album: "B", disc: 1, track: 1)
        #expect(try await client.savePlaylist(name: "Vinylogue — this week, 5 years ago", songs: [song]) == false)
        let create = try #require(forms.withLock { $0 }.first { $0.hasPrefix("createPlaylist.view") })
        #expect(!create.contains("playlistId="), "\(create)")
    }
}
