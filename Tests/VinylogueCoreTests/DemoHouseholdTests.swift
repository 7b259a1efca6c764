import Foundation
import Testing
import VinylogueCore

/// The demo's friends (`DemoHousehold`): the same people on every run, each
/// with the history the demo promises.
@Suite struct DemoHouseholdTests {
    static let household = DemoHousehold()
    /// Tue 24 Nov 2026, 12:12 UTC: the browser tests' instant.
    let now = Date(timeIntervalSince1970: 1_795_522_320)

    func member(_ name: String) throws -> DemoHousehold.Member {
        try #require(Self.household.member(try Username(name)))
    }

    func weeks(of member: DemoHousehold.Member, in years: ClosedRange<Int>) -> [ChartWeek] {
        let calendar = Calendar(identifier: .gregorian)
        var utc = calendar
        utc.timeZone = .gmt
        return member.history.chartList(now: Int64(now.timeIntervalSince1970)).weeks.filter {
            years.contains(utc.component(.year, from: $0.fromDate))
        }
    }

    @Test func isDemoAndFourFriendsListedInOrder() {
        #expect(Self.household.members.map(\.username.value) == ["demo", "theo", "mara", "felix", "june"])
        #expect(DemoHousehold.usernames == Self.household.members.map(\.username))
        #expect(DemoHousehold.isMember(try! Username("Theo")))
        #expect(!DemoHousehold.isMember(try! Username("rj")))
        // Five different listeners: different tastes, seeds and beginnings.
        #expect(Set(Self.household.members.map(\.history.seed)).count == 5)
        #expect(Set(Self.household.members.map(\.history.listening.taste)).count == 5)
        #expect(Set(Self.household.members.map(\.history.firstWeek)).count == 5)
    }

    @Test func isTheSameOnEveryRun() throws {
        let again = DemoHousehold()
        for (a, b) in zip(Self.household.members, again.members) {
            #expect(a.history.catalog.albums == b.history.catalog.albums)
            let list = a.history.chartList(now: Int64(now.timeIntervalSince1970)).weeks
            for week in stride(from: 0, to: list.count, by: 97).map({ list[$0] }) {
                #expect(a.history.scrobbles(in: week) == b.history.scrobbles(in: week))
            }
        }
    }

    /// The demo user is as it was before it had friends: its history is
    /// still `DemoHistory()`, and a second era of albums left every week
    /// before it (the sixteen years from 2011) alone.
    @Test func theDemoUserIsUnchanged() throws {
        let demo = try member("demo")
        #expect(demo.history.seed == DemoHistory().seed && demo.history.firstWeek == DemoHistory().firstWeek)
        #expect(demo.history.listening == DemoListening())
        let firstEra = demo.history.catalog.albums.filter { $0.discoveredWeek < 16 * 53 }
        #expect(firstEra.count == 1200)
        #expect(demo.history.catalog.albums.count == 2400)
    }

    /// Who is in the demo is known by name, in any casing, and spelled as
    /// the demo spells it; a demo of one knows only its one person.
    @Test func membersAreKnownByName() async throws {
        let demo = DemoChartSource(clock: .fixed(now))
        #expect(try demo.isMember(Username("THEO")) && !demo.isMember(Username("rj")))
        #expect(try demo.memberName(of: Username("Felix"))?.value == "felix")
        #expect(try demo.memberName(of: Username("nobody")) == nil)
        #expect(demo.household.members.map(\.username) == DemoHousehold.usernames)
        let alone = DemoChartSource(history: DemoHistory(), clock: .fixed(now))
        #expect(try alone.isMember(Username("demo")) && !alone.isMember(Username("theo")))
        #expect(try await alone.user(Username("DEMO")).name.value == "demo")
    }

    /// theo started in January 2019: his list starts there, and the chart
    /// page for 2019 cannot go back a year, nor can 2018 be shown.
    @Test func theosYearsStopWhereHisHistoryStarts() async throws {
        let theo = try member("theo")
        let demo = DemoChartSource(household: Self.household, clock: .fixed(now))
        let list = try await demo.chartList(for: theo.username)
        #expect(list.earliest?.fromDate == Date(timeIntervalSince1970: 1_546_776_000))
        let oldest = await WeeklyChartPage.load(.init(user: theo.username, selection: .yearsAgo(7)), from: demo, now: now)
        #expect(oldest.state == .chart)
        #expect(oldest.previous?.isEnabled == false)
        #expect(oldest.next?.isEnabled == true)
        let before = await WeeklyChartPage.load(.init(user: theo.username, selection: .yearsAgo(8)), from: demo, now: now)
        guard case .noChart(let message) = before.state else { Issue.record("2018 showed \(before.state)"); return }
        #expect(message.contains("starts in 2019"))
        let everyYear = await EveryYearPage.load(.init(user: theo.username), from: demo, now: now)
        #expect(everyYear.years.map(\.yearsAgo) == Array(1...7))
    }

    /// mara listened until May 2013 and from March 2020: nothing between,
    /// and every year leaves those years out.
    @Test func marasGapIsSilent() async throws {
        let mara = try member("mara")
        let gap = try #require(mara.history.listening.gap)
        for week in weeks(of: mara, in: 2014...2019) { #expect(mara.history.scrobbles(in: week).isEmpty) }
        #expect(weeks(of: mara, in: 2009...2012).allSatisfy { !mara.history.scrobbles(in: $0).isEmpty })
        #expect(weeks(of: mara, in: 2021...2025).allSatisfy { !mara.history.scrobbles(in: $0).isEmpty })
        #expect(mara.history.scrobbles(in: LastFMWeekCalendar.week(containing: gap.lowerBound - 1)).isEmpty == false)
        #expect(mara.history.scrobbles(in: LastFMWeekCalendar.week(containing: gap.upperBound)).isEmpty == false)

        let demo = DemoChartSource(household: Self.household, clock: .fixed(now))
        let everyYear = await EveryYearPage.load(.init(user: mara.username), from: demo, now: now)
        // Nov 2025 back to Nov 2020, then Nov 2012 back to Nov 2008.
        #expect(everyYear.years.map(\.yearsAgo) == Array(1...6) + Array(14...18))
    }

    /// felix played one album whole in nearly every week from September
    /// 2014 to the end of 2021, and never again after.
    @Test func felixHasAHeavyRepeatAlbum() throws {
        let felix = try member("felix")
        let heavy = try #require(felix.history.listening.heavyRepeat)
        let album = try #require(felix.history.repeatedAlbum)
        func plays(in week: ChartWeek) -> Int {
            felix.history.scrobbles(in: week).filter { $0.artist == album.artist && $0.album == album.name }.count
        }
        let during = weeks(of: felix, in: 2015...2021)
        let played = during.filter { plays(in: $0) >= album.tracks.count }
        #expect(Double(played.count) >= 0.85 * Double(during.count))
        // The busiest weeks play it several times over.
        #expect(during.map(plays).max()! >= 3 * album.tracks.count)
        // Never again once it is over, not even a single track.
        let after = felix.history.chartList(now: Int64(now.timeIntervalSince1970)).weeks.filter { $0.from >= heavy.until }
        #expect(after.count > 200)
        #expect(after.allSatisfy { plays(in: $0) == 0 })
        // It tops his chart in a busy week.
        let chart = ScrobbleTally.chart(.album, user: felix.username, week: during[60], scrobbles: felix.history.scrobbles(in: during[60]))
        #expect(chart.entries.prefix(3).contains { $0.name == album.name && $0.artist == album.artist })
    }

    /// june has the longest history (from 2006) and listens less than the others.
    @Test func juneListensLightlyForTheLongest() throws {
        let june = try member("june")
        #expect(Self.household.members.allSatisfy { $0.history.firstWeek.from >= june.history.firstWeek.from })
        func average(_ member: DemoHousehold.Member) -> Double {
            let sample = weeks(of: member, in: 2021...2024)
            return Double(sample.map { member.history.scrobbles(in: $0).count }.reduce(0, +)) / Double(sample.count)
        }
        #expect(average(june) < average(try member("demo")))
        #expect(average(june) < average(try member("theo")))
        #expect(average(june) > 5)
    }

    /// Every friend is served by the demo source, with a profile and albums
    /// tagged with their taste; anyone else is not found.
    @Test func theDemoSourceAnswersForEveryone() async throws {
        let demo = DemoChartSource(household: Self.household, clock: .fixed(now))
        for member in Self.household.members {
            let profile = try await demo.user(try Username(member.username.value.uppercased()))
            #expect(profile.name.value == member.username.value)
            #expect(profile.realName == member.realName)
            let list = try await demo.chartList(for: member.username)
            let chart = try await demo.chart(for: member.username, kind: .album, week: try #require(list.latest))
            #expect(!chart.entries.isEmpty)
            let top = try #require(chart.entries.first)
            let detail = try await demo.album(artist: top.artist, name: top.name, mbid: nil, user: member.username)
            #expect(detail.tags == ["demo", member.history.listening.taste.tag])
            #expect(try await demo.friends(of: member.username).count == 4)
        }
        await #expect(throws: SourceError.self) { try await demo.chartList(for: try Username("someone")) }
        await #expect(throws: SourceError.self) { try await demo.user(try Username("someone")) }
    }
}
