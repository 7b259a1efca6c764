import SQLiteStore
import Stores
import Sync
import Foundation
import LastFM
import ListenBrainz
import VinylogueCore
import Workers

extension Composition {
    /// The archive commands and the CLI's charts read and write: the one
    /// configured database (`openStorage`).
    public func openArchive(dataDir: String?) async throws -> any ScrobbleArchive {
        try await openStorage(dataDir: dataDir).backend.archive
    }

    /// The archive to chart `user` from: opened (and created) for the demo
    /// user, whose generated history is stored first, and when `--source
    /// archive` asks for it; otherwise only when the data directory already
    /// has one, so asking for a Last.fm chart never creates a directory.
    func archiveForCharts(of user: Username, pinned: SourceChoice?, dataDir: String?) async throws -> (any ScrobbleArchive)? {
        if pinned == .lastfm || (pinned == .demo && user != DemoHistory.username) { return nil }
        let directory = dataDirectory(dataDir)
        guard postgres != nil || user == DemoHistory.username || pinned == .archive || ArchiveDatabase.exists(in: directory) else {
            return nil
        }
        let store = try await openArchive(dataDir: dataDir)
        if pinned != .demo { try await fillDemo(for: user, in: store) }
        return store
    }

    /// Stores the demo history when `user` is the demo user.
    public func fillDemo(for user: Username, in store: any ScrobbleArchive) async throws(SourceError) {
        guard user == DemoHistory.username else { return }
        try await GeneratedHistory(history: demo.history, store: store).fill(now: clock.now)
    }

    /// A sync of `user` into `store` from their own service: Last.fm's
    /// recent tracks, or ListenBrainz's listens for an `lb:` user.
    public func sync(of user: Username, into store: any ScrobbleArchive) -> ScrobbleSync {
        user.service == .listenBrainz ? listenBrainzSync(into: store)
            : ScrobbleSync(store: store, gateway: recentTracksGateway, clock: clock)
    }

    /// A sync of `lb:` users into `store`, in windows of 1,000 listens.
    public func listenBrainzSync(into store: any ScrobbleArchive) -> ScrobbleSync {
        ScrobbleSync(store: store, upstream: listenBrainzHistory, clock: clock, pageSize: ListenBrainzClient.maxCount)
    }

    /// ListenBrainz's public listens, for `sync lb:NAME`.
    public var listenBrainzHistory: ListenBrainzHistory {
        let client = listenBrainz
        return ListenBrainzHistory { user, minTs, maxTs, count throws(SourceError) in
            try await client.window(of: user, minTs: minTs, maxTs: maxTs, count: count)
        }
    }

    /// Last.fm's recent tracks, for `sync`.
    public var recentTracksGateway: RecentTracksGateway {
        let client = lastFM
        return RecentTracksGateway { user, from, to, page, limit throws(SourceError) in
            try await client.recentTracks(of: user, from: from, to: to, page: page, limit: limit)
        }
    }
}

extension Composition {
    /// Brings back `user`'s album choice as an export carried it
    /// (`vinylogue import` of a "Download everything" ZIP): recorded, to be
    /// counted by `countAlbumsNow`. Returns what changed.
    public func bringBackAlbumFolding(_ folding: AlbumFolding?, choices: [AlbumChoiceChange] = [], of user: Username,
                                      dataDir: String?) async throws -> AlbumsBroughtBack {
        let backend = try await openStorage(dataDir: dataDir).backend
        let refolding = AlbumRefolding(choices: backend.archive, clock: clock, wakeup: Wakeup())
        var brought = AlbumsBroughtBack()
        if let folding { brought.switched = try await refolding.choose(folding, of: user) }
        for change in choices where try await refolding.change(change, of: user) { brought.choicesMade += 1 }
        return brought
    }

    /// Counts again, here and now, the weeks of `user`'s that wait for it
    /// (a choice brought back, albums an import tied by release): the
    /// command line runs no job runner. False when nothing waited.
    @discardableResult
    public func countAlbumsNow(of user: Username, dataDir: String?) async throws -> Bool {
        let backend = try await openStorage(dataDir: dataDir).backend
        return try await AlbumRefolding(choices: backend.archive, clock: clock, wakeup: Wakeup()).countNow(user, jobs: backend.jobs)
    }
}

/// What `bringBackAlbumFolding` changed.
public struct AlbumsBroughtBack: Sendable {
    /// Whether the switch changed.
    public var switched = false
    /// How many choices about single albums were made again (those that
    /// were so already are not counted).
    public var choicesMade = 0
}
