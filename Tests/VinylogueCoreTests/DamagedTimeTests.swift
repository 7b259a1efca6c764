import Foundation
import Testing
import VinylogueCore

/// Week arithmetic over instants no real scrobble has: a damaged archive
/// row or a hostile export must give an odd week, never an overflow trap or
/// an endless walk.
@Suite struct DamagedTimeTests {
    static let extremes: [Int64] = [
        .min, .min + 1, -1_000_000_000_000_000_000, -1, 0, 1, 1_000_000_000_000_000_000,
        200_376_420_520_689_663, .max - LastFMWeekCalendar.weekLength, .max - 1, .max,
    ]

    @Test(arguments: extremes)
    func theWeekContainingAnyInstantIsDefined(instant: Int64) {
        let week = LastFMWeekCalendar.week(containing: instant)
        #expect(week.from <= instant)
        #expect(week.from < week.to)
        #expect(week.to - week.from <= LastFMWeekCalendar.weekLength)
        // Only the very last second has no representable week end after it.
        if instant < .max { #expect(week.contains(instant)) }
    }

    @Test func weeksUpToTheEndOfTimeStop() {
        let w = LastFMWeekCalendar.weekLength
        let weeks = LastFMWeekCalendar.weeks(from: .max - 3 * w, closedBy: .max)
        #expect((2...4).contains(weeks.count))
        #expect(weeks.last?.to == .max || weeks.last.map { $0.to > .max - w } == true)
        #expect(LastFMWeekCalendar.weeks(from: .min, closedBy: .min + 3 * w).count >= 2)
    }

    @Test func ordinaryWeeksAreUnchanged() {
        // 2020-07-05 12:00 UTC to 2020-07-12 12:00 UTC.
        #expect(LastFMWeekCalendar.week(containing: 1_594_000_000) == ChartWeek(from: 1_593_950_400, to: 1_594_555_200))
        #expect(LastFMWeekCalendar.week(containing: 1_593_950_400).from == 1_593_950_400)
        #expect(LastFMWeekCalendar.week(containing: -1).to == LastFMWeekCalendar.week(containing: 0).to)
    }

    @Test func yearsWithChartsEndsForAListReachingBackToTheStartOfTime() {
        let now = Date(timeIntervalSince1970: 1_794_000_000)  // Nov 2026
        let real = LastFMWeekCalendar.week(containing: 1_594_000_000)
        let list = ChartWeekList([LastFMWeekCalendar.week(containing: .min), real, LastFMWeekCalendar.week(containing: .max)])
        let finder = ChartWeekFinder(timeZone: .gmt)
        let years = finder.yearsWithCharts(now: Date(timeIntervalSince1970: 1_594_000_000 + 6 * 365 * 86_400 + 86_400), in: list)
        #expect(years == [6])
        #expect(list.week(containing: Date(timeIntervalSince1970: 1e30)) == nil)
        #expect(list.spans(Date(timeIntervalSince1970: -1e30)))
        #expect(list.week(containing: Date(timeIntervalSince1970: .nan)) != real)
        _ = finder.lookup(yearsAgo: 3, from: now, in: list)
    }

    @Test func plausibleTimesRunFrom2002ToADayAfterNow() {
        let now = Date(timeIntervalSince1970: 1_794_000_000)
        let range = PlausibleTime.range(now: now)
        #expect(range == 1_009_843_200...1_794_086_400)
        #expect(PlausibleTime.problem(with: 1_009_843_200, now: now) == nil)
        #expect(PlausibleTime.problem(with: 1_009_843_199, now: now)?.contains("before 2002-01-01") == true)
        #expect(PlausibleTime.problem(with: 1_794_086_401, now: now)?.contains("future") == true)
        #expect(PlausibleTime.problem(with: .max, now: now) != nil)
        #expect(PlausibleTime.archived.contains(1_794_086_400))
        #expect(!PlausibleTime.archived.contains(1_000_000_000_000_000_000))
    }
}
