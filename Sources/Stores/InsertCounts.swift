import Foundation
import VinylogueCore

/// How a batch of inserts went.
public struct InsertCounts: Sendable, Hashable {
    public var inserted = 0
    /// Rows whose dedupe key was already archived.
    public var duplicates = 0

    public init(inserted: Int = 0, duplicates: Int = 0) {
        self.inserted = inserted
        self.duplicates = duplicates
    }

    public static func += (lhs: inout InsertCounts, rhs: InsertCounts) {
        lhs.inserted += rhs.inserted
        lhs.duplicates += rhs.duplicates
    }
}
