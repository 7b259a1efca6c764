import Foundation
import VinylogueCore

/// A sync in progress, as stored: the fixed bounds it downloads and the
/// next page to fetch. Its row exists only while a sync is unfinished.
///
/// For Last.fm, the bounds stay fixed and `nextPage` counts down from
/// `totalPages` to 1. For ListenBrainz (`totalPages` 0: the length is not
/// known), `toInstant` moves down to the oldest listen stored so far and
/// `nextPage` counts the windows up: `[fromInstant, toInstant]` is what is
/// left to copy.
public struct SyncState: Sendable, Hashable {
    /// Inclusive bounds, Unix seconds.
    public var fromInstant: Int64
    public var toInstant: Int64
    /// Pages are walked from `totalPages` down to 1; this one is next.
    public var nextPage: Int
    public var totalPages: Int
    public var pageSize: Int

    public init(fromInstant: Int64, toInstant: Int64, nextPage: Int, totalPages: Int, pageSize: Int) {
        self.fromInstant = fromInstant
        self.toInstant = toInstant
        self.nextPage = nextPage
        self.totalPages = totalPages
        self.pageSize = pageSize
    }
}
