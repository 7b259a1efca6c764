import Foundation
import MusicServers
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import Stores
@testable import Workers

/// The weekly playlist kept on a person's music server (`KeptPlaylists`,
/// `WeeklyPlaylists`, `JobKind.weeklyPlaylist`) on both stores: queued
/// once per week however many instances ask, made on the server in chart
/// order and noted for Settings; a run whose worker died is taken over; a
/// person who deletes their account, stops the playlist or forgets the
/// server while a run is matching stops it before its write to the
/// server, and nothing of theirs is written after.
@Suite struct WeeklyPlaylistJobTests {
    typealias Backend = StoreContractTests.Backend
    /// Thursday 28 May 2026, 16:53 UTC.
    static let now = Date(timeIntervalSince1970: 1_780_000_000)
    static let years = 2
    static let title = "Vinylogue — this week, 2 years ago"
    static let password = "right one"

    /// The week two years back: Tidewater (three tracks, two of them also
    /// as its deluxe edition), then HEY WHAT, then an album the library
    /// lacks.
    static func history() -> [Scrobble] {
        let start = WeeklyPlaylists.week(yearsAgo: years, from: now, timeZone: .gmt) + 3_600
        var scrobbles: [Scrobble] = []
        for n in 0..<3 { scrobbles.append(Scrobble(instant: start + Int64(n) * 600, artist: "Vetiver", album: "Tidewater", track: "T\(n)")) }
        for n in 0..<2 {
            scrobbles.append(Scrobble(instant: start + 3_000 + Int64(n) * 600, artist: "Vetiver", album: "Tidewater (Deluxe Edition)", track: "T\(n)"))
        }
        for n in 0..<3 { scrobbles.append(Scrobble(instant: start + 7_200 + Int64(n) * 600, artist: "Low", album: "HEY WHAT", track: "White Horses")) }
        scrobbles.append(Scrobble(instant: start + 9_000, artist: "Nobody", album: "Missing Album", track: "Gone"))
        return scrobbles
    }

    static func library() -> FakeSubsonicLibrary {
        FakeSubsonicLibrary(albums: [
            .init(id: "al1", name: "Tidewater", artist: "Vetiver", songs: (0..<4).map {
                .init(id: "t\($0)", title: "T\($0)", artist: "Vetiver", album: "Tidewater", track: $0 + 1)
            }),
            .init(id: "al2", name: "HEY WHAT", artist: "Low", songs: [
                .init(id: "w1", title: "White Horses", artist: "Low", album: "HEY WHAT", track: 1),
                .init(id: "w2", title: "Days Like These", artist: "Low", album: "HEY WHAT", track: 2),
            ]),
        ], password: password)
    }

    /// A clock the test moves.
    final class Clock: Sendable {
        let current = Mutex(WeeklyPlaylistJobTests.now)
        var wall: WallClock { WallClock { self.current.withLock { $0 } } }
        func advance(days: Double) { current.withLock { $0 = $0.addingTimeInterval(days * 86_400) } }
    }

    static func handler(_ stores: StoreContractTests.Stores, transport: SubsonicTransport, clock: WallClock) -> WeeklyPlaylists {
        let access = MusicServerAccess(policy: MusicServerPolicy(environmentValue: "music.test"),
                                       subsonic: { SubsonicClient(account: $0, transport: transport) })
        let archive = stores.scrobbles, accounts = stores.accounts
        return WeeklyPlaylists(store: stores.musicServers, access: access, person: { try? await accounts.account(id: $0.id)?.name },
                               timeZone: { _ in .gmt },
                               playlist: { user, years, now, zone throws(SourceError) in
                                   try await archive.weekPlaylist(of: user, yearsAgo: years, now: now, timeZone: zone)
                               },
                               clock: clock)
    }

    /// Signs `name` in, stores the week's history, saves their server and
    /// keeps its weekly playlist.
    static func keeping(_ name: String, _ stores: StoreContractTests.Stores, password: String = password) async throws -> Account {
        let user = try Username(name)
        let (account, _) = try await stores.accounts.signedIn(user, lastFMSessionKey: "sk-\(name)", at: now)
        try await stores.scrobbles.store(history(), of: user, origin: .lastFMExport)
        try await stores.musicServers.setMusicServer(MusicServerSetting(kind: .subsonic, address: "http://music.test:4533", username: name,
                                                                        password: password), of: account.owner, at: now)
        #expect(try await stores.musicServers.keepPlaylist(yearsAgo: years, of: account.owner, at: now))
        return account
    }

    /// `library` behind a server that holds its answer to the first
    /// album's songs until the test lets it go: `reached` returns once a
    /// run is held there, `release` lets it go on.
    static func holdingFirstAlbum(of library: FakeSubsonicLibrary)
        -> (transport: SubsonicTransport, reached: @Sendable () async -> Void, release: @Sendable () -> Void) {
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let (gate, opened) = AsyncStream.makeStream(of: Void.self)
        let held = Mutex(false)
        let transport = SubsonicTransport { url, form, _ in
            if url.lastPathComponent == "getAlbum.view", held.withLock({ was in defer { was = true }; return !was }) {
                arrived.yield()
                for await _ in gate { break }
            }
            return library.answer(url, form)
        }
        return (transport, { for await _ in arrivals { break } }, { opened.yield() })
    }

    static func claim(_ stores: StoreContractTests.Stores, as holder: String = "m/1/runner", at: Date = now,
                      takingOverFrom isGone: @escaping @Sendable (String) -> Bool = { _ in false }) async throws -> JobClaim? {
        try await stores.jobs.claimNext(of: [.weeklyPlaylist], on: "m", as: holder, at: at, lease: 600, takingOverFrom: isGone)
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aKeptPlaylistIsQueuedOncePerWeekAndMadeOnTheServerInChartOrder(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let library = Self.library(), clock = Clock()
            let handler = Self.handler(stores, transport: library.transport, clock: clock.wall)
            // Nobody keeps one without a server.
            #expect(try await !stores.musicServers.keepPlaylist(yearsAgo: 1, of: .household, at: Self.now))
            let ana = try await Self.keeping("ana", stores)
            // Two instances look at once: one queues it.
            async let first = handler.queueDue(at: Self.now)
            async let second = handler.queueDue(at: Self.now)
            #expect(await first + second == 1)
            #expect(await handler.queueDue(at: Self.now.addingTimeInterval(3_600)) == 0, "the same week again")
            let claim = try #require(try await Self.claim(stores))
            #expect(claim.job.person == "ana")
            #expect(claim.job.key == String(ana.owner.id))
            #expect(await handler.run(claim) == .done)
            #expect(try await stores.jobs.end(claim, as: .done, at: Self.now))

            let made = library.playlists.withLock { $0 }
            #expect(made.count == 1)
            #expect(made.first?.name == Self.title)
            // Tidewater's three tracks played (its deluxe edition's folded in), then HEY WHAT's one.
            #expect(made.first?.songs == ["t0", "t1", "t2", "w1"])
            let kept = try #require(try await stores.musicServers.keptPlaylist(of: ana.owner))
            #expect(kept.note == "Made “\(Self.title)”: 4 songs of 2 albums. Not in your library: Missing Album (Nobody).")
            #expect(kept.notedAt == Self.now)
            #expect(kept.week == WeeklyPlaylists.week(yearsAgo: Self.years, from: Self.now, timeZone: .gmt))

            // A week later: queued again, and the server's playlist replaced.
            clock.advance(days: 7)
            let later = clock.wall.now
            #expect(await handler.queueDue(at: later) == 1)
            #expect(await handler.queueDue(at: later) == 0)
            let again = try #require(try await Self.claim(stores, at: later))
            #expect(again.job.id != claim.job.id)
            #expect(await handler.run(again) == .done)
            #expect(library.playlists.withLock { $0.count } == 1)
            // That week two years back was empty: the playlist is left as it was, and Settings says so.
            #expect(try await stores.musicServers.keptPlaylist(of: ana.owner)?.note
                == "Nothing was played this week 2 years ago, so the playlist on your server was left as it was.")
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aRunWhoseWorkerDiedIsTakenOverAndMakesThePlaylistOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let library = Self.library()
            let handler = Self.handler(stores, transport: library.transport, clock: .fixed(Self.now))
            let ana = try await Self.keeping("ana", stores)
            #expect(await handler.queueDue(at: Self.now) == 1)
            // A worker claims it and dies before it writes anything.
            let dead = try #require(try await Self.claim(stores, as: "m/1/dead"))
            #expect(try await Self.claim(stores, as: "m/2/alive") == nil, "held under a live lease")
            let claim = try #require(try await Self.claim(stores, as: "m/2/alive", takingOverFrom: { $0 == "m/1/dead" }))
            #expect(claim.job.id == dead.job.id)
            #expect(await handler.run(claim) == .done)
            // The dead worker's claim no longer holds: it can note nothing.
            #expect(try await !stores.musicServers.note("from the dead", of: dead, at: Self.now))
            #expect(try await stores.musicServers.begin(dead) == nil)
            #expect(library.playlists.withLock { $0.map(\.name) } == [Self.title])
            #expect(try await stores.musicServers.keptPlaylist(of: ana.owner)?.note?.hasPrefix("Made “") == true)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func aServerThatRefusesIsTriedAgainWithASentenceForSettings(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let library = Self.library()
            let handler = Self.handler(stores, transport: library.transport, clock: .fixed(Self.now))
            let ana = try await Self.keeping("ana", stores, password: "changed since")
            #expect(await handler.queueDue(at: Self.now) == 1)
            let claim = try #require(try await Self.claim(stores))
            let ending = await handler.run(claim)
            guard case .retry(let at, let reason) = ending else { Issue.record("\(ending)"); return }
            #expect(at == Self.now.addingTimeInterval(15 * 60))
            #expect(reason.contains("does not accept that user and password"))
            let note = try #require(try await stores.musicServers.keptPlaylist(of: ana.owner)?.note)
            #expect(note.hasSuffix("It is tried again in 15 minutes."), "\(note)")
            #expect(!note.contains("changed since"))
            #expect(library.playlists.withLock { $0.isEmpty })
        }
    }

    /// What ends a kept playlist while its run is matching albums.
    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        case accountDeleted, playlistStopped, serverForgotten
        var testDescription: String { rawValue }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases, Ending.allCases)
    func endingItWhileARunMatchesStopsTheRunBeforeItsWriteToTheServer(_ backend: Backend, _ ending: Ending) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let library = Self.library()
            let (transport, reached, release) = Self.holdingFirstAlbum(of: library)
            let handler = Self.handler(stores, transport: transport, clock: .fixed(Self.now))
            let zeb = try await Self.keeping("Zebulon42", stores)
            #expect(await handler.queueDue(at: Self.now) == 1)
            let claim = try #require(try await Self.claim(stores))
            let run = Task { await handler.run(claim) }
            await reached()
            switch ending {
            case .accountDeleted: _ = try await eraser.erase(zeb)
            case .playlistStopped: #expect(try await stores.musicServers.keepPlaylist(yearsAgo: nil, of: zeb.owner, at: Self.now))
            case .serverForgotten: try await stores.musicServers.forgetMusicServer(of: zeb.owner)
            }
            release()
            #expect(await run.value == .done)
            #expect(library.playlists.withLock { $0.isEmpty }, "nothing was written to the server")
            #expect(try await stores.jobs.job(claim.job.id) == nil, "the job went with it")
            #expect(try await !stores.musicServers.note("late", of: claim, at: Self.now))
            let kept = try await stores.musicServers.keptPlaylist(of: zeb.owner)
            #expect(kept == nil)
            if ending == .accountDeleted {
                let left = try await dump().filter { $0.2.lowercased().contains("zebulon42") || $0.2.contains("music.test") }
                #expect(left.isEmpty, "left after the erasure: \(left)")
            }
            // Stopped or forgotten: the next look queues nothing.
            #expect(await handler.queueDue(at: Self.now.addingTimeInterval(8 * 86_400)) == 0)
        }
    }

    /// Years changed while a run matches (the probe's finding): the week
    /// queued for them finds this run under way, so the run, once done,
    /// is queued again at once to make the new years' playlist.
    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func yearsChangedDuringARunAreMadeAtOnceAfterIt(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let library = Self.library()
            let (transport, reached, release) = Self.holdingFirstAlbum(of: library)
            let handler = Self.handler(stores, transport: transport, clock: .fixed(Self.now))
            let ana = try await Self.keeping("ana", stores)
            #expect(await handler.queueDue(at: Self.now) == 1)
            let claim = try #require(try await Self.claim(stores))
            let run = Task { await handler.run(claim) }
            await reached()
            #expect(try await stores.musicServers.keepPlaylist(yearsAgo: 3, of: ana.owner, at: Self.now))
            #expect(try await stores.musicServers.queueKeptPlaylist(of: ana.owner, week: WeeklyPlaylists.week(yearsAgo: 3, from: Self.now, timeZone: .gmt),
                                                                    at: Self.now))
            release()
            let ending = await run.value
            #expect(ending == .retry(at: Self.now, reason: "The years changed while it was being made; it is made again."))
            #expect(try await stores.jobs.end(claim, as: ending, at: Self.now))
            // Run again, it is for three years back (when nothing was played).
            let again = try #require(try await Self.claim(stores))
            #expect(again.job.id == claim.job.id)
            #expect(await handler.run(again) == .done)
            #expect(try await stores.musicServers.keptPlaylist(of: ana.owner)?.note
                == "Nothing was played this week 3 years ago, so the playlist on your server was left as it was.")
        }
    }
}
