import Foundation
@testable import HTTPServing
import Hummingbird
import HummingbirdTesting
@testable import ListenIngest
import SQLiteStore
import Stores
import Sync
import Synchronization
import TestSupport
import Testing
import VinylogueCore
@testable import Web
import Workers

/// The request that knows who asks (issue 37): the viewer is read from the
/// session at most once per request, and only when something needs it;
/// whose page it is, and what the viewer may see of it, is decided once by
/// the person's route group and handed on as a value, never through a
/// task-local; a view's history copy is queued after the page is answered.
@Suite struct RequestContextTests {
    /// Accounts with one live session, counting how often a session is looked up.
    final class CountingAccounts: AccountStore {
        let account: Account
        let sessionDigest: String
        let lookups = Atomic<Int>(0)
        let restricted: [Restriction]

        init(account: Account, sessionToken: String, restricted: [Restriction]) {
            self.account = account
            sessionDigest = SignInSessions.digest(sessionToken)
            self.restricted = restricted
        }

        func account(forSession digest: String, at now: Date) async throws -> Account? {
            lookups.add(1, ordering: .relaxed)
            return digest == sessionDigest ? account : nil
        }
        func restrictions() async throws -> [Restriction] { restricted }
        func visibility(of account: Account) async throws -> Visibility { .everyone }
        func setVisibility(_ visibility: Visibility, of account: Account) async throws {}
        func signedIn(_ name: Username, lastFMSessionKey: String, at now: Date) async throws -> (account: Account, isNew: Bool) { (account, false) }
        func startSession(digest: String, for account: Account, at now: Date, expires: Date, replacing old: String?) async throws {}
        func endSession(digest: String) async throws {}
        func sessionCount() async throws -> Int { 1 }
        func accountCount() async throws -> Int { 1 }
        func account(named name: Username) async throws -> Account? { nil }
        func account(id: Int64) async throws -> Account? { nil }
    }

    /// What the person's route saw, in order.
    final class Seen: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static let token = String(repeating: "ab", count: 32)
    static let cookie = "\(SignInSessions.cookieName)=\(token)"

    /// A router as the app's: `ViewerMiddleware` on every route, a
    /// `/u/{user}` group behind `PersonMiddleware`; Vera shows her
    /// listening to nobody but herself.
    static func router(accounts: CountingAccounts, lists: any ListStore, seen: Seen) async throws -> Router<WebRequestContext> {
        let clock = TestClock(july2023).wallClock
        let viewers = Viewers(signIn: SignInSessions(accounts: accounts, clock: clock, secureCookies: false),
                              settings: try await CurrentSettings(store: lists, clock: clock))
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: ViewerMiddleware(viewers: viewers))
        router.get("/nobody-asks") { _, _ in "fine" }
        router.get("/asks-thrice") { _, context in
            // Asked at once from three tasks, and again after: one lookup.
            async let one = context.viewer, two = context.viewer, three = context.viewer
            let all = await [one, two, three, await context.viewer]
            _ = await viewers.settings(for: context)
            return all.allSatisfy { $0 == all[0] } ? "\(all[0])" : "differ"
        }
        let people = router.group("/u/:user").add(middleware: PersonMiddleware(audiences: try await Audiences(store: accounts), canonical: nil))
        people.get { _, context in
            let person = try context.requiredPerson()
            let viewer = await context.viewer
            _ = await viewers.settings(for: context)
            seen.add("\(person.name.value) concealed=\(person.isConcealed) restricted=\(person.isRestricted)")
            return "\(viewer)"
        }
        return router
    }

    @Test func theViewerIsLookedUpOncePerRequestAndOnlyWhenAsked() async throws {
        let directory = try TemporaryDirectory()
        let lists = SQLiteListStore(try ArchiveDatabase(directory: directory.url))
        let mika = Account(id: 2, name: try Username("Mika"))
        let vera = Account(id: 1, name: try Username("Vera"))
        let accounts = CountingAccounts(account: mika, sessionToken: Self.token,
                                        restricted: [Restriction(account: vera, visibility: .onlyMe, friends: [])])
        let seen = Seen()
        try await Application(router: try await Self.router(accounts: accounts, lists: lists, seen: seen)).test(.router) { client in
            func lookups(_ uri: String, cookie: String? = Self.cookie) async throws -> (Int, String) {
                let before = accounts.lookups.load(ordering: .relaxed)
                let response = try await client.execute(uri: uri, method: .get, headers: cookie.map { [.cookie: $0] } ?? [:], body: nil)
                return (accounts.lookups.load(ordering: .relaxed) - before, String(buffer: response.body))
            }
            // A route that never asks who asks costs no lookup, session cookie or not.
            #expect(try await lookups("/nobody-asks").0 == 0)
            // Four asks, three of them at once, and the settings: one lookup.
            let thrice = try await lookups("/asks-thrice")
            #expect(thrice.0 == 1)
            #expect(thrice.1.contains("Mika"), "\(thrice.1)")
            // Without a session cookie the viewer is known from memory.
            #expect(try await lookups("/asks-thrice", cookie: nil) == (0, "visitor"))
            // A restricted person: the middleware's visibility check and the
            // route's viewer and settings share one lookup.
            let hidden = try await lookups("/u/Vera")
            #expect(hidden.0 == 1)
            // Someone who restricts nobody: the route's ask is the only one.
            #expect(try await lookups("/u/Noor").0 == 1)
        }
        #expect(seen.all == ["Vera concealed=true restricted=true", "Noor concealed=false restricted=false"])
    }

    /// Concealment is a value handed to what answers, not the ambient
    /// state of a task: the same `ListeningSources` answers for the
    /// person as before, in the same task, beside the copy that conceals them.
    @Test func concealmentIsHandedOnNotBoundToTheTask() async throws {
        let demo = DemoChartSource(clock: .fixed(july2023))
        let sources = ListeningSources(archive: nil, demo: demo, lastFM: demo)
        let person = try Username("demo")
        let concealing = sources.concealing(.only(person))
        #expect(sources.isDemo(person))
        #expect(!concealing.isDemo(person))
        #expect(concealing.concealment.conceals(person) && !sources.concealment.concealsAnyone)
        await #expect(throws: SourceError.unknownUser(person)) { try await concealing.chosenCharts(for: person).source.chartList(for: person) }
        await #expect(throws: SourceError.unknownUser(person)) { try await concealing.profiles(for: person).user(person) }
        // Work started from the concealing request (as a page's work ahead
        // is) sees exactly what it was handed.
        let answered = await Task.detached { await sources.chosenCharts(for: person).origin }.value
        #expect(answered == .demo)
        #expect(try await sources.chosenCharts(for: person).source.chartList(for: person).weeks.isEmpty == false)
        // Kept pages are out of reach of a request that conceals someone.
        let rendered = RenderedPages(clock: .fixed(july2023))
        #expect(rendered.unlessConcealing(.only(person)) == nil)
        #expect(rendered.unlessConcealing(.nobody) === rendered)
    }

    /// Work handed to the background, held until the test runs it.
    final class Later: Sendable {
        private let work = Mutex<[@Sendable () async -> Void]>([])
        func add(_ job: @escaping @Sendable () async -> Void) { work.withLock { $0.append(job) } }
        var all: [@Sendable () async -> Void] { work.withLock { $0 } }
    }

    /// A view that makes a copy due answers with the copy as it will stand
    /// (queued) at once; the queueing itself is work after the answer.
    @Test func aViewAnswersBeforeItsCopyIsQueued() async throws {
        let directory = try TemporaryDirectory()
        let database = try ArchiveDatabase(directory: directory.url)
        let store = SQLiteHistoryCopyStore(database)
        let clock = WallClock.fixed(july2023)
        let later = Later()
        let archive = SQLiteScrobbleStore(database: database)
        let gateway = RecentTracksGateway { _, _, _, _, _ throws(SourceError) in throw SourceError.notFound(what: "Nothing") }
        let worker = HistoryCopyWorker(copies: store, syncs: { _ in ScrobbleSync(store: archive, gateway: gateway, clock: clock) }, clock: clock,
                                       queued: Wakeup(), later: { work in later.add(work) })
        let demo = DemoChartSource(clock: clock)
        let sources = ListeningSources(archive: nil, demo: nil, lastFM: demo, copies: worker)
        let mika = try Username("Mika")
        let chosen = await sources.chosenCharts(for: mika)
        #expect(chosen.origin == .lastfm)
        #expect(chosen.copy?.state == .queued)
        // Answered; nothing queued yet: the queueing waits in the background.
        #expect(try await store.copy(of: mika) == nil)
        let waiting = later.all
        #expect(waiting.count == 1)
        for work in waiting { await work() }
        let queued = try await store.copy(of: mika)
        #expect(queued?.state == .queued, "\(String(describing: queued))")
        // Asked again while it is queued: nothing more to queue.
        _ = await sources.chosenCharts(for: mika)
        #expect(later.all.count == waiting.count)
    }
}
