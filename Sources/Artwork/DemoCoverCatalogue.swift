import VinylogueCore
import Synchronization

/// Which (artist, album) each demo hash stands for, so `/art/demo/<hash>.png`
/// can be drawn on request. A hash cannot be turned back into names, so
/// whoever puts a demo album on a page registers it here first (the demo chart
/// presenter, via the composition root); unregistered hashes are "not found".
///
/// Thread-safe and synchronous, so presenters can register without `await`.
public final class DemoCoverCatalogue: Sendable {
    private let covers = Mutex<[String: GeneratedCover]>([:])

    public init() {}

    /// Remembers the album and returns the address its cover is served at.
    @discardableResult
    public func register(artist: String, album: String) -> ArtworkAddress {
        let cover = GeneratedCover(artist: artist, album: album)
        let address = cover.address
        covers.withLock { $0[address.hash] = cover }
        return address
    }

    /// The cover registered under a `.demo` address, if any.
    public func cover(for address: ArtworkAddress) -> GeneratedCover? {
        guard address.isGenerated else { return nil }
        return covers.withLock { $0[address.hash] }
    }
}
