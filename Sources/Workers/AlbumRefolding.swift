import Foundation
import Stores
import VinylogueCore

/// A person's choices of how their albums group (`AlbumChoices`), and the
/// work they set off: the one queue's `JobKind.albumFolding` jobs, which
/// count the person's listed weeks again slice by slice (each slice one
/// transaction under the job's fence) while their pages keep answering
/// from the charts as they were. A change made while a run is under way
/// lists its weeks, which the run takes in turn; the slice that finds none
/// left ends the job in its transaction, so a later change queues another.
public struct AlbumRefolding: JobHandler {
    public let kind = JobKind.albumFolding
    let choices: any AlbumChoices
    let clock: WallClock
    let wakeup: Wakeup
    let changes: ListeningChanges?

    public init(choices: any AlbumChoices, clock: WallClock, wakeup: Wakeup, changes: ListeningChanges? = nil) {
        self.choices = choices
        self.clock = clock
        self.wakeup = wakeup
        self.changes = changes
    }

    /// `user`'s grouping now.
    public func folding(of user: Username) async throws(SourceError) -> AlbumFolding {
        try await choices.albumFolding(of: user)
    }

    /// `user`'s choices about single albums, in the order they were made.
    public func choices(of user: Username) async throws(SourceError) -> [AlbumChoice] {
        try await choices.albumChoices(of: user)
    }

    /// Records `folding`'s switch as `user`'s, wakes the runner for the
    /// count it queued, and forgets their kept pages (a chart from Last.fm
    /// folds by the choice at once). Returns whether it changed.
    @discardableResult
    public func choose(_ folding: AlbumFolding, of user: Username) async throws(SourceError) -> Bool {
        let changed = try await choices.chooseAlbumFolding(folding, of: user, at: clock.now)
        if changed { await announce(user) }
        return changed
    }

    /// Applies `change` to `user`'s choices about single albums, as
    /// `choose` does. Returns whether anything changed.
    @discardableResult
    public func change(_ change: AlbumChoiceChange, of user: Username) async throws(SourceError) -> Bool {
        let changed = try await choices.changeAlbums(change, of: user, at: clock.now)
        if changed { await announce(user) }
        return changed
    }

    private func announce(_ user: Username) async {
        wakeup.signal()
        await changes?.changed(.listens(user))
    }

    public func run(_ claim: JobClaim) async -> JobEnding {
        guard let user = Username(validating: claim.job.person) else { return .failed(reason: "The job names nobody.") }
        do throws(SourceError) {
            while try await choices.countAgain(user, under: claim, at: clock.now) {
                if Task.isCancelled { return .stopped }
            }
        } catch {
            // The person's data went (or the job was taken over): nothing more to count.
            if case .cancelled = error { return .done }
            if Task.isCancelled { return .stopped }
            return .retry(at: clock.now.addingTimeInterval(60), reason: error.message)
        }
        await changes?.changed(.listens(user))
        return .done
    }

    /// Counts `user`'s charts again now, in this process (the command line
    /// runs no runner): claims their queued job, runs it with its lease
    /// renewed, and ends it. False when none was queued, or another
    /// process holds it (it will finish it).
    public func countNow(_ user: Username, jobs: any JobQueue) async throws -> Bool {
        let lease: TimeInterval = 120
        guard let claim = try await jobs.claim(kind, key: user.key, as: JobHolder.name(), at: clock.now, lease: lease,
                                               takingOverFrom: JobHolder.isGone) else { return false }
        let ending = await JobRunner.renewing(claim, in: jobs, clock: clock, lease: lease) { await run(claim) }
        _ = try await jobs.end(claim, as: ending, at: clock.now)
        return ending == .done
    }
}
