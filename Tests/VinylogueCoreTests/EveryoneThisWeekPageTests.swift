import Foundation
import Synchronization
import Testing
import VinylogueCore

/// Counts the chart lists being fetched at once, and the most ever. The
/// first `gathering` fetches wait for each other (a barrier, not a sleep):
/// a loader that runs them side by side gets past it, one that runs them
/// one at a time never does.
final class InFlight: Sendable {
    private struct State {
        var now = 0
        var most = 0
        var gathered = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    let gathering: Int

    init(gathering: Int = 1) { self.gathering = gathering }

    func begin() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let released: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.now += 1
                state.most = max(state.most, state.now)
                if state.gathered { return [continuation] }
                state.waiting.append(continuation)
                guard state.now >= gathering else { return [] }
                state.gathered = true
                defer { state.waiting.removeAll() }
                return state.waiting
            }
            released.forEach { $0.resume() }
        }
    }

    func end() { state.withLock { $0.now -= 1 } }
    var most: Int { state.withLock { $0.most } }
}

/// The captured history for everyone, counting how many are asked at once.
struct SlowChartSource: ChartSource {
    let inner: StubChartSource
    let inFlight: InFlight

    func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        await inFlight.begin()
        defer { inFlight.end() }
        return try await inner.chartList(for: user)
    }

    func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        try await inner.chart(for: user, kind: kind, week: week)
    }
}

@Suite struct EveryoneThisWeekPageTests {
    let now = Date(timeIntervalSince1970: 1_688_800_000)  // Sat 8 Jul 2023
    let source = StubChartSource(list: CapturedHistory.list, charts: [CapturedHistory.week: CapturedHistory.rows])

    @Test func eachPersonGetsTheirWeekInTheListsOrderAndAFailureStaysOnItsCard() async throws {
        let names = try ["ybsc", "rj", "hidden", "zed"].map(Username.init)
        let failing = StubChartSource(list: CapturedHistory.list, failure: .privateProfile(user: "hidden"))
        let page = await EveryoneThisWeekPage.load(.init(users: names, yearsAgo: 3, coversPerPerson: 2), sources: { user in
            user.value == "hidden" ? failing : source
        }, now: now)
        #expect(page.people.map(\.user) == names)
        #expect(page.yearsAgoLabel == "3 years ago")
        #expect(page.weekLabel == "Week 28 · Jul 5 – 12, 2020")
        let ybsc = page.people[0]
        #expect(ybsc.top?.name == "Live at The Electric Ballroom")
        #expect(ybsc.top?.plays == 22)
        #expect(ybsc.topRows.map(\.name) == ["Live at The Electric Ballroom", "technicolor"])
        #expect(ybsc.failure == nil)
        let hidden = page.people[2]
        #expect(hidden.failure == .privateProfile(user: "hidden"))
        #expect(hidden.top == nil && hidden.topRows.isEmpty)
        #expect(page.people[3].top?.plays == 22)
        // Years: back to 4 years ago (the history goes back to 2005), on to 2.
        #expect([page.previous.label, page.next.label] == ["2019", "2021"])
        #expect(page.previous.yearsAgo == 4)
        #expect(page.next.yearsAgo == 2)
        #expect(page.previous.isEnabled && page.next.isEnabled)
    }

    @Test func theFilterAppliesAndOneYearAgoHasNoNextYear() async {
        let users = [CapturedHistory.user]
        let filtered = await EveryoneThisWeekPage.load(.init(users: users, yearsAgo: 3, filter: PlayCountFilter(threshold: 20)),
                                                       sources: { _ in source }, now: now)
        #expect(filtered.people[0].topRows.map(\.plays) == [22])
        // 2022: after the captured list ended, so nothing there, but the way back is open.
        let one = await EveryoneThisWeekPage.load(.init(users: users, yearsAgo: 1), sources: { _ in source }, now: now)
        #expect(one.people[0].top == nil)
        #expect(one.people[0].emptyText != nil)
        #expect(one.next.isEnabled == false)
        #expect(one.previous.isEnabled)
        #expect(await EveryoneThisWeekPage.load(.init(users: []), sources: { _ in source }, now: now).emptyText == "Nobody is on your list yet.")
    }

    /// The first four wait until four are asked at once (so a loader that
    /// took them one at a time would hang, and the time limit fails it);
    /// none beyond the limit of four is ever asked meanwhile.
    @Test(.timeLimit(.minutes(1))) func chartsAreLoadedSideBySideButNeverMoreThanTheLimit() async throws {
        let inFlight = InFlight(gathering: 4)
        let slow = SlowChartSource(inner: source, inFlight: inFlight)
        let names = try (1...20).map { try Username("listener\($0)") }
        let page = await EveryoneThisWeekPage.load(.init(users: names, yearsAgo: 3, concurrentLoads: 4), sources: { _ in slow }, now: now)
        #expect(page.people.map(\.user) == names)
        #expect(page.people.allSatisfy { $0.top?.plays == 22 })
        #expect(inFlight.most == 4)
    }
}
