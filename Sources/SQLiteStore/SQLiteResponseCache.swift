import Foundation
import Stores
import LastFM
import VinylogueCore

/// Keeps Last.fm's successful answers in the archive database, so past
/// weeks never need fetching twice and pages survive Last.fm being down.
public struct SQLiteResponseCache: LastFMResponseCache {
    let table: ResponseCacheTable
    let clock: WallClock

    public init(_ database: ArchiveDatabase, clock: WallClock) {
        table = ResponseCacheTable(database)
        self.clock = clock
    }

    public func lookup(_ key: String) async -> CachedResponse? {
        await table.entry(for: key).map { CachedResponse(body: $0.body, expires: $0.expiresAt) }
    }

    public func store(_ body: Data, for key: String, expires: Date) async {
        await table.store(body, for: key, at: clock.now, expires: expires)
    }
}
