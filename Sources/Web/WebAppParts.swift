import Artwork
import Foundation
import ListenBrainz
import MusicServers
import HTTPServing
import Imports
import LastFM
import ListenIngest
import Mail
import Stores
import Sync
import VinylogueCore
import Workers

/// What the web app is made of, built by the composition root and read
/// only by `buildApplication`, which makes from it what the routes share
/// (kept pages, who is asking, received listens) and gives each route
/// group only what that group uses.
public struct WebAppParts: Sendable {
    public var clock: WallClock
    /// Every store, in the one database chosen at start-up.
    public var stores: any StoreBackend
    public var lastFM: LastFMClient
    /// The built-in demo, when it is on.
    public var demo: DemoChartSource?
    /// Profiles of `lb:` users, when ListenBrainz is configured.
    public var listenBrainz: (any UserSource)?
    /// Saves a playlist on a person's ListenBrainz account with their
    /// token (the one they forward listens with): "Make it on ListenBrainz".
    public var listenBrainzPlaylists: (@Sendable (AlbumPlaylist, _ token: String) async throws(SourceError) -> ListenBrainzClient.SavedPlaylist?)?
    /// History copies into the archive: at sign-in, on first view, and
    /// those queued by other instances.
    public var copies: HistoryCopyWorker?
    /// Whether Last.fm people's histories are copied (at sign-in, on
    /// view); Settings then shows one's own copy.
    public var copiesHistories: Bool
    /// Exports uploaded on Settings, imported in the background.
    public var uploads: UploadedImports?
    /// People's choices of how their albums group, and the counts they set
    /// off (nil: the setting is not offered).
    public var albumFolding: AlbumRefolding?
    /// The job queue's runner (uploads' imports, history copies), a service of the server.
    public var jobs: JobRunner?
    public var settings: CurrentSettings
    /// Who may see whose listening, read at start.
    public var audiences: Audiences
    public var pages: PageRenderer
    public var artwork: ArtworkStore
    public var demoCovers: DemoCoverCatalogue
    public var shareCards: ShareCardStore
    public var background: BackgroundWork
    /// The one stream of changes to what people's pages show, which the
    /// pages kept here follow (the workers announce on it too).
    public var changes: ListeningChanges
    /// Sends received listens on; nil when no service is configured.
    public var forwarding: ListenForwarding?
    /// How people's own music servers are reached (the operator's policy
    /// and the clients); nil: Settings offers none.
    public var musicServers: MusicServerAccess?
    /// The mail server and sender the weekly digest goes out through;
    /// nil when none is configured (the digest is then off, and Settings
    /// says why).
    public var mail: MailSetup?
    public var patience: Patience
    /// Whether people sign in with Last.fm (accounts) rather than share
    /// one household.
    public var signsIn: Bool
    /// Whether the session cookie is sent only over HTTPS.
    public var secureCookies: Bool
    /// The secret `/2.0/` sign-in verifiers are sealed with; without one
    /// they last as long as the process.
    public var mobileVerifierSecret: Data?

    public init(clock: WallClock, stores: any StoreBackend, lastFM: LastFMClient, settings: CurrentSettings, audiences: Audiences,
                pages: PageRenderer, artwork: ArtworkStore, demoCovers: DemoCoverCatalogue, shareCards: ShareCardStore, background: BackgroundWork) {
        self.clock = clock
        self.stores = stores
        self.lastFM = lastFM
        self.settings = settings
        self.audiences = audiences
        self.pages = pages
        self.artwork = artwork
        self.demoCovers = demoCovers
        self.shareCards = shareCards
        self.background = background
        changes = ListeningChanges(notices: stores.notices)
        demo = nil
        listenBrainz = nil
        copies = nil
        copiesHistories = false
        uploads = nil
        forwarding = nil
        mail = nil
        patience = Patience()
        signsIn = false
        secureCookies = false
        mobileVerifierSecret = nil
    }

    /// Who answers for whom: the archive, the demo, Last.fm or ListenBrainz.
    var sources: ListeningSources {
        ListeningSources(archive: stores.archive, demo: demo, lastFM: lastFM, listenBrainz: listenBrainz, copies: copies)
    }
}

/// How email leaves this server: a mail server and the sender's address.
public struct MailSetup: Sendable {
    public var delivery: any MailDelivery
    public var from: MailAddress

    public init(delivery: any MailDelivery, from: MailAddress) {
        self.delivery = delivery
        self.from = from
    }
}
/// The web server's configuration (HTTPServing's), not HummingbirdCore's of the same name.
typealias ServerConfiguration = HTTPServing.ServerConfiguration
