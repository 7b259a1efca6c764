import Foundation
import Workers
@testable import HTTPServing
import Hummingbird
import HummingbirdTesting
@testable import ListenIngest
import SQLiteStore
import Stores
import Synchronization
import TestSupport
import Testing
import VinylogueCore
@testable import Web

/// The warm page's shortcut: a kept page asked exactly as before is
/// answered before the router, with the headers it was kept with, and only
/// when the route would answer the same kept entry.
@Suite struct KeptPageShortcutTests {
    /// Who is restricted, as a test says.
    final class FixedVisibility: VisibilityStore {
        let restrictions = Mutex<[Restriction]>([])
        func visibility(of account: Account) async throws -> Visibility { .everyone }
        func setVisibility(_ visibility: Visibility, of account: Account) async throws {}
        func restrictions() async throws -> [Restriction] { restrictions.withLock { $0 } }
    }

    /// The shortcut and what it reads, over a fresh household's settings.
    struct Parts {
        let clock = TestClock(july2023)
        let rendered: RenderedPages
        let settings: CurrentSettings
        let visibility = FixedVisibility()
        let audiences: Audiences
        let nowPlaying: NowPlaying
        let shortcut: KeptPageShortcut

        init(in directory: borrowing TemporaryDirectory) async throws {
            let lists = SQLiteListStore(try ArchiveDatabase(directory: directory.url))
            rendered = RenderedPages(clock: clock.wallClock)
            settings = try await CurrentSettings(store: lists, clock: clock.wallClock)
            audiences = try await Audiences(store: visibility)
            nowPlaying = NowPlaying(clock: clock.wallClock)
            shortcut = KeptPageShortcut(rendered: rendered, viewers: Viewers(signIn: nil, settings: settings), audiences: audiences,
                                        nowPlaying: nowPlaying, metrics: nil)
        }
    }

    @Test func aKeptPageAskedAsBeforeSkipsTheRouteUnlessTheRouteMustDecide() async throws {
        let directory = try TemporaryDirectory()
        let parts = try await Parts(in: directory)
        let (clock, rendered, settings, visibility, audiences, nowPlaying, shortcut) =
            (parts.clock, parts.rendered, parts.settings, parts.visibility, parts.audiences, parts.nowPlaying, parts.shortcut)
        let rj = try Username("RJ")
        let routeCalls = Atomic<Int>(0)
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        router.get("/u/:user") { request, context in
            routeCalls.add(1, ordering: .relaxed)
            let current = await settings.current(for: .household)
            let key = "chart|RJ|\(current.fingerprint)"
            if nowPlaying.track(of: rj) == nil, let kept = rendered.response(key, to: request) { return kept }
            let body = ByteBuffer(string: "RJ's page, filter \(current.filter.threshold)")
            let response = WholeAnswer.response(status: .ok, body: body, contentType: RenderedPages.html)
            if nowPlaying.track(of: rj) == nil {
                rendered.keep(key, status: .ok, body: body, etag: response.headers[.eTag])
                rendered.remember(request.uri.description, settings: current.fingerprint, as: key, user: rj, route: "/u/:user", showsNowPlaying: true)
            }
            return response
        }
        try await Application(router: KeptPagesFirst(router: router, shortcut: shortcut)).test(.router) { client in
            func ask(_ uri: String = "/u/RJ?years_ago=3") async throws -> (calls: Int, response: TestResponse) {
                let before = routeCalls.load(ordering: .relaxed)
                let response = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
                return (routeCalls.load(ordering: .relaxed) - before, response)
            }
            let first = try await ask()
            #expect(first.calls == 1)
            let warm = try await ask()
            #expect(warm.calls == 0, "asked as before: answered without the route")
            #expect(warm.response.body == first.response.body)
            #expect(warm.response.headers[.contentSecurityPolicy] == first.response.headers[.contentSecurityPolicy])
            #expect(warm.response.headers[.eTag] == first.response.headers[.eTag] && warm.response.headers[.eTag] != nil)
            #expect(warm.response.headers[values: .contentSecurityPolicy].count == 1)
            // Another spelling of the address goes to the route (which keeps it under the same entry).
            #expect(try await ask("/u/RJ?years_ago=3&utm=x").calls == 1)
            // While RJ's player plays something, the route makes the page.
            nowPlaying.heard(NowPlaying.Track(artist: "Low", track: "Lullaby", album: "", until: july2023.addingTimeInterval(60)), for: rj)
            #expect(try await ask().calls == 1)
            clock.advance(days: 61.0 / 86_400)
            // The kept entry expired meanwhile: the route again, then the shortcut.
            #expect(try await ask().calls == 1)
            #expect(try await ask().calls == 0)
            // Restricted: who may see RJ is the route's to decide.
            visibility.restrictions.withLock { $0 = [Restriction(account: Account(id: 1, name: rj), visibility: .onlyMe, friends: [])] }
            try await audiences.reload()
            #expect(try await ask().calls == 1)
            visibility.restrictions.withLock { $0 = [] }
            try await audiences.reload()
            #expect(try await ask().calls == 0)
            // Other settings: not the page kept under the old ones.
            try await settings.save(Settings(filter: PlayCountFilter(threshold: 5)))
            let refiltered = try await ask()
            #expect(refiltered.calls == 1 && String(buffer: refiltered.response.body) == "RJ's page, filter 5")
        }
    }

    /// A page kept with a policy of its own (the widget's, which any site
    /// may frame) is answered by the shortcut with that policy, and without
    /// the `X-Frame-Options: DENY` the other pages carry.
    @Test func aKeptFramablePageKeepsItsOwnPolicyOnTheShortcut() async throws {
        let directory = try TemporaryDirectory()
        let parts = try await Parts(in: directory)
        let rj = try Username("RJ")
        let routeCalls = Atomic<Int>(0)
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        router.get("/u/:user/widget") { request, _ in
            routeCalls.add(1, ordering: .relaxed)
            let key = "widget|page|RJ"
            if let kept = parts.rendered.response(key, to: request) { return kept }
            let body = ByteBuffer(string: "RJ's widget")
            var response = WholeAnswer.response(status: .ok, body: body, contentType: RenderedPages.html)
            response.headers.append(contentsOf: WidgetRoutes.framable)
            parts.rendered.keep(key, status: .ok, body: body, etag: response.headers[.eTag], own: WidgetRoutes.framable)
            let fingerprint = await parts.settings.current(for: .household).fingerprint
            parts.rendered.remember(request.uri.description, settings: fingerprint, as: key, user: rj, route: "/u/:user/widget",
                                    showsNowPlaying: false)
            return response
        }
        router.get("/u/:user") { _, _ in Response(status: .ok) }
        try await Application(router: KeptPagesFirst(router: router, shortcut: parts.shortcut)).test(.router) { client in
            for expectedCalls in [1, 0] {
                let before = routeCalls.load(ordering: .relaxed)
                let widget = try await client.execute(uri: "/u/RJ/widget", method: .get, headers: [:], body: nil)
                #expect(routeCalls.load(ordering: .relaxed) - before == expectedCalls)
                #expect(widget.headers[values: .contentSecurityPolicy] == [WidgetRoutes.pagePolicy])
                #expect(widget.headers[SecurityHeaderFields.frameOptions] == nil)
                #expect(widget.headers[.xContentTypeOptions] == "nosniff")
            }
            let chart = try await client.execute(uri: "/u/RJ", method: .get, headers: [:], body: nil)
            #expect(chart.headers[.contentSecurityPolicy]?.hasSuffix("frame-ancestors 'none'") == true)
            #expect(chart.headers[SecurityHeaderFields.frameOptions] == "DENY")
        }
    }
}
