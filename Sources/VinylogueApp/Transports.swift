import Artwork
import AsyncHTTPClient
import LastFM
import ListenBrainz
import Logging
import Mail
import MusicServers
import Web
import Workers

/// How the composition reaches the services outside the process: Last.fm's
/// API, its image host, ListenBrainz, and the mail server. `live`, the default, goes over
/// HTTP with the composition's one client: what `serve` and every command
/// use. The route tests give stand-ins that answer in this process, with
/// no socket; the graph is wired the same way either way.
public struct Transports: Sendable {
    let lastFM: @Sendable (HTTPClient) -> LastFMTransport
    let images: @Sendable (HTTPClient) -> ArtworkUpstream
    let listenBrainz: @Sendable (HTTPClient) -> ListenBrainzTransport
    /// How mail reaches the configured mail server.
    let mail: @Sendable (SMTPConfiguration) -> any MailDelivery
    /// How people's Subsonic-API servers are reached (over the composition's
    /// client for music servers, which follows no redirect).
    let subsonic: @Sendable (HTTPClient) -> SubsonicTransport

    /// Over HTTP, with the composition's client; mail over SMTP.
    public static var live: Transports {
        Transports(lastFM: { .live($0) }, images: { .live($0) }, listenBrainz: { .live($0) }, mail: { Self.smtp($0) },
                   subsonic: { .live($0) })
    }

    private init(lastFM: @escaping @Sendable (HTTPClient) -> LastFMTransport, images: @escaping @Sendable (HTTPClient) -> ArtworkUpstream,
                 listenBrainz: @escaping @Sendable (HTTPClient) -> ListenBrainzTransport,
                 mail: @escaping @Sendable (SMTPConfiguration) -> any MailDelivery,
                 subsonic: @escaping @Sendable (HTTPClient) -> SubsonicTransport) {
        self.lastFM = lastFM
        self.images = images
        self.listenBrainz = listenBrainz
        self.mail = mail
        self.subsonic = subsonic
    }

    /// These transports as they are (the composition's HTTP client is then
    /// not used for them); mail goes to `mail` when given, else over SMTP;
    /// Subsonic servers are reached by `subsonic` when given, else over HTTP.
    public init(lastFM: LastFMTransport, images: ArtworkUpstream, listenBrainz: ListenBrainzTransport, mail: (any MailDelivery)? = nil,
                subsonic: SubsonicTransport? = nil) {
        self.init(lastFM: { _ in lastFM }, images: { _ in images }, listenBrainz: { _ in listenBrainz },
                  mail: { configuration in mail ?? Transports.smtp(configuration) }, subsonic: { subsonic ?? .live($0) })
    }

    /// The SMTP client for `configuration`: every reply within 20 s (the
    /// end of the message within 60 s), so a whole send, TLS and sign-in
    /// included, ends well within a digest's ten-minute claim.
    static func smtp(_ configuration: SMTPConfiguration) -> any MailDelivery {
        SMTPClient(configuration: configuration, timeouts: SMTPTimeouts(connect: .seconds(10), command: .seconds(20), dataEnd: .seconds(60)),
                   logger: Logger(label: "vinylogue.smtp"))
    }
}
