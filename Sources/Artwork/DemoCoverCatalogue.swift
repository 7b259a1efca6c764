import VinylogueCore
import Synchronization

/// Which (artist, album) each demo hash stands for, so `/art/demo/<hash>.png`
/// can be drawn on request. A hash cannot be turned back into names, so
/// whoever puts a demo album on a page registers it here first (the demo chart
/// presenter, via the composition root); unregistered hashes are "not found".
///
/// Thread-safe and synchronous, so presenters can register without `await`.
public final class DemoCoverCatalogue: Sendable {
    /// The covers registered, and the lists of albums to register once a
    /// cover is first asked for (`registerWhenAsked`).
    private struct Registry {
        var covers: [String: GeneratedCover] = [:]
        var later: [@Sendable () -> [(artist: String, album: String)]] = []

        mutating func register(_ cover: GeneratedCover) -> ArtworkAddress {
            let address = cover.address
            covers[address.hash] = cover
            return address
        }
    }

    private let registry = Mutex(Registry())

    public init() {}

    /// Remembers the album and returns the address its cover is served at.
    @discardableResult
    public func register(artist: String, album: String) -> ArtworkAddress {
        let cover = GeneratedCover(artist: artist, album: album)
        return registry.withLock { $0.register(cover) }
    }

    /// Registers every album `albums` gives when a cover is first asked
    /// for, not now: the demo's thousands of albums cost milliseconds to
    /// hash, and most runs (a command, a test) never draw one.
    public func registerWhenAsked(_ albums: @escaping @Sendable () -> [(artist: String, album: String)]) {
        registry.withLock { $0.later.append(albums) }
    }

    /// The cover registered under a `.demo` address, if any.
    public func cover(for address: ArtworkAddress) -> GeneratedCover? {
        guard address.isGenerated else { return nil }
        return registry.withLock { registry in
            if let cover = registry.covers[address.hash] { return cover }
            // Registered under the lock, so a second asker waits for the
            // whole list rather than finding it half made.
            let later = registry.later
            registry.later = []
            for albums in later {
                for album in albums() { _ = registry.register(GeneratedCover(artist: album.artist, album: album.album)) }
            }
            return registry.covers[address.hash]
        }
    }
}
