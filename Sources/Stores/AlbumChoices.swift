import Foundation
import VinylogueCore

/// A person's choice of how their plays group into albums
/// (`AlbumFolding`: editions as one album, the default, or every spelling
/// its own), kept beside their archive, and the work a change of it sets
/// off: their kept charts counted again, by a job of the one queue
/// (`JobKind.albumFolding`), while their pages keep answering.
///
/// The choice is keyed by the person's name, so it is theirs whether or
/// not their listening is archived (a chart from Last.fm folds as they
/// chose too); it goes with their account (`AccountErasure`).
public protocol AlbumChoices: Sendable {
    /// `user`'s choice (`.editions` unless they chose otherwise).
    func albumFolding(of user: Username) async throws(SourceError) -> AlbumFolding

    /// Records `folding` as `user`'s choice. When it changes and `user`'s
    /// listening is archived, queues the job that counts their charts
    /// again in the same transaction. Returns whether it changed.
    func chooseAlbumFolding(_ folding: AlbumFolding, of user: Username, at now: Date) async throws(SourceError) -> Bool

    /// Counts `user`'s kept charts of the weeks after `week` (from the
    /// first when nil) again with their choice as it is now: a slice of
    /// weeks in one transaction, under `fence` when given. Returns where
    /// the next slice starts and which version of the choice was used.
    func countAgain(_ user: Username, after week: Int64?, fence: JobFence?) async throws(SourceError) -> CountedAgain
}

/// What one slice of `AlbumChoices.countAgain` did.
public struct CountedAgain: Sendable, Hashable {
    /// The last week counted; nil when there was none left (the person's
    /// charts are all counted with the choice).
    public let lastWeek: Int64?
    /// The choice's version the slice counted with (each change adds one):
    /// a run that sees it change has to count again from the start.
    public let version: Int64

    public init(lastWeek: Int64?, version: Int64) {
        self.lastWeek = lastWeek
        self.version = version
    }

    /// Weeks counted again in one transaction: short enough for a write
    /// lock that other writers wait behind, long enough to be quick.
    public static let weeksPerSlice = 26
}
