import Foundation
import VinylogueCore

/// A person's choices of how their plays group into albums, kept beside
/// their archive: the switch (`AlbumFolding`: editions as one album, the
/// default, or every spelling its own) and their choices about single
/// albums (`AlbumChoice`: a spelling kept apart, an album joined to
/// another). A change queues the work it sets off in its transaction: the
/// weeks whose charts it touches go on the person's list of weeks to count
/// again, and a job of the one queue (`JobKind.albumFolding`) counts them
/// while their pages keep answering.
///
/// The choices are keyed by the person's name, so they are theirs whether
/// or not their listening is archived (a chart from Last.fm folds as they
/// chose too); they go with their account (`AccountErasure`).
public protocol AlbumChoices: Sendable {
    /// `user`'s grouping: the switch (on unless they turned it off) and
    /// their choices.
    func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding

    /// `user`'s choices about single albums, in the order they were made.
    func albumChoices(of user: Username) async throws(SourceError) -> [AlbumChoice]

    /// Records `folding.foldsEditions` as `user`'s switch. When it changes
    /// and `user`'s listening is archived, every week of theirs is to be
    /// counted again. Returns whether it changed. With a `fence` (an
    /// upload's job bringing the choice back), only while that job's claim
    /// holds (else `SourceError.cancelled` and nothing written).
    func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool

    /// Applies `change` to `user`'s choices (`AlbumChoiceChange.applied`);
    /// when `user`'s listening is archived, the weeks it touches are to be
    /// counted again. Returns whether anything changed. `fence` as for
    /// `chooseAlbumFolding`.
    func changeAlbums(_ change: AlbumChoiceChange, of user: Username, at now: Date, fence: JobFence?) async throws(SourceError) -> Bool

    /// Counts one slice of `user`'s weeks waiting to be counted again
    /// (at most `ChartRecount.weeksPerSlice`, in one transaction under `claim`'s fence)
    /// with their grouping as it is now. When none is left, ends `claim`'s
    /// job as done in the same transaction (so a change made after this
    /// queues a job of its own) and returns false.
    /// Without a claim (the benchmark), nothing is fenced or ended.
    func countAgain(_ user: Username, under claim: JobClaim?, at now: Date) async throws(SourceError) -> Bool
}

extension AlbumChoices {
    /// `chooseAlbumFolding` outside any job (the person's own form).
    public func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date) async throws(SourceError) -> Bool {
        try await chooseAlbumFolding(folding, of: user, at: now, fence: nil)
    }

    /// `changeAlbums` outside any job (the person's own form).
    public func changeAlbums(_ change: AlbumChoiceChange, of user: Username, at now: Date) async throws(SourceError) -> Bool {
        try await changeAlbums(change, of: user, at: now, fence: nil)
    }
}

/// The weeks of a person waiting to have their charts counted again after
/// a change of their album choices (`AlbumChoices.countAgain`).
public enum ChartRecount {
    /// Weeks counted again in one transaction: short enough for a write
    /// lock that other writers wait behind, long enough to be quick.
    public static let weeksPerSlice = 26

    /// When the archive's write (which has no clock of its own: its
    /// callers' listens carry their own times) and its migrations queue
    /// the count: due at once, whatever time the runner's clock says.
    public static let dueAtOnce = Date(timeIntervalSince1970: 0)
}
