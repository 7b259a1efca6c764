import Foundation
import Stores
import Sync
import VinylogueCore

/// Runs one person's history copy under its claim (`HistoryCopyStore`):
/// each page stored renews the lease and records how far the copy has
/// come, and the copy ends done, or failed with the reason in words for
/// the person. The sync itself resumes from the archive's own state
/// (`SyncState`), so a copy taken over after a crash goes on where the
/// last page ended.
public struct ClaimedCopy: Sendable {
    public let copies: any HistoryCopyStore
    public let clock: WallClock
    /// How long a claim lasts without a page stored: long enough for
    /// Last.fm's retries of one page, short enough that a copy whose
    /// process died is taken over soon.
    public let lease: TimeInterval

    public init(copies: any HistoryCopyStore, clock: WallClock, lease: TimeInterval = 300) {
        self.copies = copies
        self.clock = clock
        self.lease = lease
    }

    /// Claims `user`'s copy; nil while another process holds it. A copy
    /// held by a process of this machine that no longer runs (a sync killed
    /// or crashed) is taken over at once, without waiting out its lease.
    public func claim(_ user: Username) async throws(SourceError) -> CopyClaim? {
        do {
            return try await copies.claim(user, as: Self.holderName(), at: clock.now, lease: lease, takingOverFrom: Self.isGone)
        } catch {
            throw Self.storage(error)
        }
    }

    /// Which machine and process holds a claim (`JobHolder`).
    static func holderName() -> String { JobHolder.name() }

    /// Whether `holder` names a process of this machine that has ended.
    @Sendable static func isGone(_ holder: String) -> Bool { JobHolder.isGone(holder) }

    /// Runs `sync` for the claimed person, telling `progress` as it goes;
    /// the claim ends with the copy. A claim lost meanwhile (the process
    /// stalled past its lease and another took over, or the lease could not
    /// be renewed three pages running) stops the sync at the next page and
    /// is an error.
    public func run(_ claim: CopyClaim, _ sync: ScrobbleSync,
                    progress: @escaping @Sendable (SyncProgress) async -> Void = { _ in }) async throws(SourceError) -> SyncSummary {
        let held = HeldFlag()
        let copies = self.copies, clock = self.clock, lease = self.lease
        let outcome: Result<SyncSummary, SourceError> = await withTaskGroup(of: Result<SyncSummary, SourceError>.self) { group in
            group.addTask {
                do throws(SourceError) {
                    return .success(try await sync.sync(claim.user, fence: JobFence(claim)) { step in
                        let renewed: Bool?
                        do {
                            // A resumed copy goes on counting from what its row says.
                            let walked = claim.copy.scrobbles + step.imported + step.duplicates
                            renewed = try await copies.progress(claim, pagesDone: step.pagesDone, pagesTotal: step.totalPages, scrobbles: walked,
                                                                scrobblesTotal: step.expected ?? 0, at: clock.now, lease: lease)
                        } catch {
                            renewed = nil
                        }
                        // Taken over, or the lease could not be renewed three
                        // times running: this worker stops (between pages).
                        if await held.renewal(renewed) == false { withUnsafeCurrentTask { $0?.cancel() } }
                        await progress(step)
                    })
                } catch {
                    return .failure(error)
                }
            }
            return await group.next() ?? .failure(.storage(detail: "the copy of \(claim.user.value) did not run"))
        }
        switch outcome {
        case .failure(let error):
            let fenced = if case .cancelled = error { true } else { false }
            let stillHeld = await held.held
            if fenced || !stillHeld {
                // Taken over, stopped by the person, or deleted with their
                // account or what was copied: the row (or its absence) says which.
                let row: HistoryCopy?
                do { row = try await copies.copy(of: claim.user) } catch { throw Self.storage(error) }
                if row?.state == .stopped { throw Self.stopped(claim) }
                if row == nil, fenced { throw error }
                throw Self.takenOver(claim)
            }
            if Task.isCancelled {
                // The worker stops with its server: the copy waits in the
                // queue, and the next worker resumes it where it stopped
                // (written in a task of its own: a cancelled task's
                // database calls refuse to start).
                let now = clock.now
                await Task { _ = try? await copies.release(claim, at: now) }.value
                throw error
            }
            _ = try? await copies.finish(claim, failure: error.message, at: clock.now)
            throw error
        case .success(let summary):
            let ended: Bool
            do { ended = try await copies.finish(claim, failure: nil, at: clock.now) } catch { throw Self.storage(error) }
            guard ended, await held.held else { throw Self.takenOver(claim) }
            return summary
        }
    }

    static func takenOver(_ claim: CopyClaim) -> SourceError {
        .storage(detail: "the copy of \(claim.user.value) was taken over by another process while this one was stalled; "
            + "what both stored is kept once")
    }

    static func stopped(_ claim: CopyClaim) -> SourceError {
        .storage(detail: "the copy of \(claim.user.value) was stopped at the person's request; what it copied is kept")
    }

    static func storage(_ error: any Error) -> SourceError {
        error as? SourceError ?? .storage(detail: "the copies' table could not be used (\(error))")
    }

    /// Whether the claim is still this worker's, from its renewals.
    private actor HeldFlag {
        var held = true
        private var failedRenewals = 0

        /// Records one renewal (true: renewed; false: taken over; nil: the
        /// database could not say); returns whether the claim still holds.
        func renewal(_ renewed: Bool?) -> Bool {
            switch renewed {
            case true?: failedRenewals = 0
            case false?: held = false
            case nil:
                failedRenewals += 1
                if failedRenewals >= 3 { held = false }
            }
            return held
        }
    }
}
