import Foundation
import PropertyBased
import Testing
import VinylogueCore

/// Builds a chart list from a script: 0 or 3 a normal week, 1 a gap, 2 a week
/// that overlaps the previous one by a second.
func scriptedList(start: Int64, script: [Int]) -> ChartWeekList {
    var weeks: [ChartWeek] = []
    var from = LastFMWeekCalendar.week(containing: start).from
    for step in script {
        let week = LastFMWeekCalendar.weekLength
        switch step {
        case 1: break
        case 2: weeks.append(ChartWeek(from: from - 1, to: from + week))
        default: weeks.append(ChartWeek(from: from, to: from + week))
        }
        from += week
    }
    return ChartWeekList(weeks)
}

@Suite struct ChartWeekListTests {
    let ybscFirst = ChartWeek(from: 1_108_296_000, to: 1_108_900_800)

    @Test func findsTheWeekContainingAnInstant() {
        let list = ChartWeekList([ChartWeek(from: 100, to: 200), ChartWeek(from: 200, to: 300), ChartWeek(from: 400, to: 500)])
        #expect(list.week(containing: 100) == ChartWeek(from: 100, to: 200))
        #expect(list.week(containing: 199) == ChartWeek(from: 100, to: 200))
        #expect(list.week(containing: 200) == ChartWeek(from: 200, to: 300))
        #expect(list.week(containing: 350) == nil)  // a gap
        #expect(list.week(containing: 99) == nil)
        #expect(list.week(containing: 500) == nil)
        #expect(list.spans(Date(timeIntervalSince1970: 350)))
        #expect(!list.spans(Date(timeIntervalSince1970: 500)))
    }

    @Test func aBoundarySecondBelongsToTheWeekStartingThere() {
        // Real lists sometimes overlap neighbours by one second.
        let list = ChartWeekList([ChartWeek(from: 100, to: 201), ChartWeek(from: 200, to: 300)])
        #expect(list.week(containing: 200) == ChartWeek(from: 200, to: 300))
        #expect(list.week(containing: 199) == ChartWeek(from: 100, to: 201))
    }

    /// Weeks out of order, repeated or empty are put in order and the empty
    /// ones dropped; a list in order (the calendar's) is kept as it is.
    @Test func aListIsInOrderWithoutEmptyWeeks() {
        let a = ChartWeek(from: 100, to: 200), b = ChartWeek(from: 200, to: 300), c = ChartWeek(from: 300, to: 400)
        #expect(ChartWeekList([c, a, b]).weeks == [a, b, c])
        #expect(ChartWeekList([a, ChartWeek(from: 250, to: 250), b]).weeks == [a, b])
        #expect(ChartWeekList([a, b, b, c]).weeks == [a, b, b, c])
        #expect(ChartWeekList([a, b, c]).weeks == [a, b, c])
        let calendar = LastFMWeekCalendar.weeks(from: 1_108_296_000, closedBy: 1_700_000_000)
        #expect(ChartWeekList(calendar).weeks == calendar && calendar.count > 900)
    }

    @Test func emptyListsHaveNoWeeks() {
        let list = ChartWeekList([])
        #expect(list.week(containing: 0) == nil)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(!list.spans(now))
        let finder = ChartWeekFinder(timeZone: .gmt)
        #expect(finder.yearsWithCharts(now: now, in: list).isEmpty)
        #expect(finder.lookup(yearsAgo: 1, from: now, in: list) == .outsideHistory(target: finder.target(yearsAgo: 1, from: now)))
    }

    @Test func lastFMWeeksStartOnSundayNoonUTC() {
        let week = LastFMWeekCalendar.week(containing: 1_594_000_000)
        #expect(week == ChartWeek(from: 1_593_950_400, to: 1_594_555_200))
        #expect(LastFMWeekCalendar.week(containing: 1_593_950_400) == week)
        #expect(LastFMWeekCalendar.week(containing: 1_593_950_399).to == week.from)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.weekday, .hour, .minute], from: week.fromDate)
        #expect(c.weekday == 1 && c.hour == 12 && c.minute == 0)
        // Before 1970 too.
        let old = LastFMWeekCalendar.week(containing: -1)
        #expect(old.contains(-1) && old.to - old.from == LastFMWeekCalendar.weekLength)
    }

    @Test func weekContainmentMatchesALinearScan() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...3).array(of: 0...120), Gen.int64(in: -3...130 * 604_800)) { script, offset in
            let start: Int64 = 1_108_296_000
            let list = scriptedList(start: start, script: script)
            let instant = start + offset
            let expected = list.weeks.filter { $0.contains(instant) }.max { $0.from < $1.from }
            #expect(list.week(containing: instant) == expected)
        }
    }
}

@Suite struct ChartWeekFinderTests {
    let utc = ChartWeekFinder(timeZone: .gmt)

    func date(_ text: String, zone: TimeZone = .gmt) -> Date {
        let f = ISO8601DateFormatter()
        f.timeZone = zone
        return f.date(from: text)!
    }

    @Test func feb29MinusAYearIsFeb28() {
        let now = date("2024-02-29T10:00:00Z")
        #expect(utc.target(yearsAgo: 1, from: now) == date("2023-02-28T10:00:00Z"))
        #expect(utc.target(yearsAgo: 4, from: now) == date("2020-02-29T10:00:00Z"))
    }

    @Test func yearsAreCountedInThePersonsTimeZone() {
        // 10 March 2024, 08:00 in New York (daylight time) minus a year is
        // 10 March 2023, 08:00 New York (standard time): 13:00 UTC, not 12:00.
        let ny = ChartWeekFinder(timeZone: TimeZone(identifier: "America/New_York")!)
        let now = date("2024-03-10T12:00:00Z")
        #expect(ny.target(yearsAgo: 1, from: now) == date("2023-03-10T13:00:00Z"))
        #expect(utc.target(yearsAgo: 1, from: now) == date("2023-03-10T12:00:00Z"))
    }

    @Test func findsTheCapturedWeekForYbsc() throws {
        // ybsc's album chart fixture is for the week 1593950400–1594555200.
        let list = scriptedList(start: 1_108_296_000, script: Array(repeating: 0, count: 804))
        let now = date("2023-07-08T09:00:00Z")
        #expect(utc.lookup(yearsAgo: 3, from: now, in: list) == .found(ChartWeek(from: 1_593_950_400, to: 1_594_555_200)))
    }

    @Test func historyThatStartsMidYearBoundsTheYears() {
        // History from 15 July 2019 to 20 July 2022; now is 1 Jan 2023.
        let list = scriptedList(start: 1_563_148_800, script: Array(repeating: 0, count: 158))
        let now = date("2023-01-01T12:00:00Z")
        #expect(utc.yearsWithCharts(now: now, in: list) == [1, 2, 3])
        #expect(list.spans(utc.target(yearsAgo: 3, from: now)))
        #expect(!list.spans(utc.target(yearsAgo: 4, from: now)))  // Jan 2019 is before the history
        // Now in August 2023: one year ago (Aug 2022) is after the last week.
        let later = date("2023-08-01T12:00:00Z")
        if case .outsideHistory = utc.lookup(yearsAgo: 1, from: later, in: list) {} else { Issue.record("expected outside history") }
        #expect(list.spans(utc.target(yearsAgo: 2, from: later)))
    }

    @Test func gapsAreAnExplicitState() {
        var script = Array(repeating: 0, count: 200)
        for i in 40..<60 { script[i] = 1 }
        let start: Int64 = 1_262_520_000  // Sun 3 Jan 2010 12:00 UTC
        let list = scriptedList(start: start, script: script)
        let inGap = Date(timeIntervalSince1970: TimeInterval(start + 50 * 604_800 + 3600))
        #expect(utc.lookup(instant: inGap, in: list) == .noChart(target: inGap))
    }

    @Test func lookupsAgreeWithTheListForAnyHistory() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...3).array(of: 0...900), Gen.int(in: 1...20), Gen.int64(in: 0...400_000_000)) { script, n, nowOffset in
            let list = scriptedList(start: 1_108_296_000, script: script)
            let now = Date(timeIntervalSince1970: TimeInterval(1_108_296_000 + nowOffset))
            let target = utc.target(yearsAgo: n, from: now)
            switch utc.lookup(yearsAgo: n, from: now, in: list) {
            case .found(let week):
                #expect(week.contains(target))
            case .noChart:
                #expect(list.spans(target) && list.week(containing: target) == nil)
            case .outsideHistory:
                #expect(!list.spans(target))
            }
            let years = utc.yearsWithCharts(now: now, in: list)
            for year in years { #expect(list.week(containing: utc.target(yearsAgo: year, from: now)) != nil) }
            if list.week(containing: target) != nil { #expect(years.contains(n)) }
        }
    }
}
