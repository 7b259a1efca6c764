import Artwork
import AsyncHTTPClient
import LastFM
import ListenBrainz

/// How the composition reaches the services outside the process: Last.fm's
/// API, its image host, and ListenBrainz. `live`, the default, goes over
/// HTTP with the composition's one client: what `serve` and every command
/// use. The route tests give stand-ins that answer in this process, with
/// no socket; the graph is wired the same way either way.
public struct Transports: Sendable {
    let lastFM: @Sendable (HTTPClient) -> LastFMTransport
    let images: @Sendable (HTTPClient) -> ArtworkUpstream
    let listenBrainz: @Sendable (HTTPClient) -> ListenBrainzTransport

    /// Over HTTP, with the composition's client.
    public static var live: Transports {
        Transports(lastFM: { .live($0) }, images: { .live($0) }, listenBrainz: { .live($0) })
    }

    private init(lastFM: @escaping @Sendable (HTTPClient) -> LastFMTransport, images: @escaping @Sendable (HTTPClient) -> ArtworkUpstream,
                 listenBrainz: @escaping @Sendable (HTTPClient) -> ListenBrainzTransport) {
        self.lastFM = lastFM
        self.images = images
        self.listenBrainz = listenBrainz
    }

    /// These transports as they are (the composition's HTTP client is then
    /// not used for them).
    public init(lastFM: LastFMTransport, images: ArtworkUpstream, listenBrainz: ListenBrainzTransport) {
        self.init(lastFM: { _ in lastFM }, images: { _ in images }, listenBrainz: { _ in listenBrainz })
    }
}
