import Foundation
import VinylogueCore

extension ArchiveReading {
    /// `user`'s `calendarYear` from the archive; nil when it does not hold them.
    public func yearInReview(of user: Username, in calendarYear: ListeningYear) async throws(SourceError) -> YearInReview? {
        // Two independent reads, at once.
        async let spanRead = Self.outcome { () async throws(SourceError) in try await span(for: user) }
        guard let listening = try await yearListening(of: user, in: calendarYear) else { return nil }
        let history = try await spanRead.get()
        return YearInReview.build(user: user, year: calendarYear, listening: listening, span: history)
    }

    /// `user`'s anniversaries and rituals of `now`'s week in `timeZone`;
    /// nil when the archive does not hold them. One read of the weeks
    /// around this week in every year of their history.
    public func anniversaries(of user: Username, now: Date, timeZone: TimeZone) async throws(SourceError) -> Anniversaries? {
        guard let history = try await span(for: user) else { return nil }
        let weeks = Anniversaries.weeks(now: now, timeZone: timeZone, since: history.lowerBound)
        let length = LastFMWeekCalendar.weekLength, margin = Int64(Anniversaries.ritualMargin)
        let around = weeks.map { item in (-margin...margin).map { ChartWeek(from: item.week.from + $0 * length, to: item.week.to + $0 * length) } }
        let anniversaryWeeks = Set(weeks.filter { Anniversaries.isAnniversary($0.yearsAgo) }.map(\.week))
        guard let charted = try await albumsCharted(of: user, lifeOf: anniversaryWeeks, around: around, inAtLeast: Anniversaries.ritualYears)
        else { return nil }
        return Anniversaries.build(user: user, now: now, timeZone: timeZone, weeks: weeks, charted: charted)
    }

    private static func outcome<T: Sendable>(_ work: @Sendable () async throws(SourceError) -> T) async -> Result<T, SourceError> {
        do throws(SourceError) { return .success(try await work()) } catch { return .failure(error) }
    }
}
