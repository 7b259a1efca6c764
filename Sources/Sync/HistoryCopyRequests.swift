import Foundation
import Stores
import VinylogueCore

/// History copies as the pages see them: a view of a person's pages,
/// which queues a copy of their history when one is due, and how their
/// last copy here failed. The workers' `HistoryCopyWorker` is it.
public protocol HistoryCopyRequests: Sendable {
    /// The copies' clock, for whether an archive is up to date.
    var clock: WallClock { get }
    /// Reads `user`'s copy and, when one is due, queues it after the page
    /// is answered; returns the copy as it will stand.
    func viewed(_ user: Username) async -> HistoryCopy?
    /// The same, with the copy as it stands already read (`current`; nil:
    /// there is none), as a chart page's one read of the archive reads it.
    func viewed(_ user: Username, standing current: HistoryCopy?) async -> HistoryCopy?
    /// How `user`'s last copy in this process failed, when it did.
    func failure(of user: Username) -> SourceError?
    /// About how long `copy` has left (nil when its length is not known).
    func secondsLeft(_ copy: HistoryCopy) -> TimeInterval?
}
