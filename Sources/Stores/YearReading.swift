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

    private static func outcome<T: Sendable>(_ work: @Sendable () async throws(SourceError) -> T) async -> Result<T, SourceError> {
        do throws(SourceError) { return .success(try await work()) } catch { return .failure(error) }
    }
}
