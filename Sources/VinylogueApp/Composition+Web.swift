import Artwork
import Foundation
import MusicServers
import HTTPServing
import Hummingbird
import Imports
import LastFM
import ListenBrainz
import ListenIngest
import Logging
import Stores
import Sync
import VinylogueCore
import Web
import Workers

extension Composition {
    /// The web app, built from the configuration: opens (creating when
    /// missing) the database in the data directory, readies the demo when
    /// it is on (and takes its people off a list it made when it is not),
    /// and wires the cached Last.fm client, the art
    /// store, the sources and the routes. `serve` runs what this returns;
    /// the route tests drive it with `app.test`. `onServing` gets the bound
    /// port once the server listens.
    public func buildApplication(onServing: @escaping @Sendable (Int) async -> Void = { _ in }) async throws -> some ApplicationProtocol {
        // The certificate first: a wrong path is said before anything is opened.
        let tls = try configuration.server.tls.map { files throws(TLSFilesUnreadable) in try ServerTLS(files: files) }
        let parts = try await webAppParts()
        var logger = Logger(label: "vinylogue.server")
        logger.logLevel = logLevel(default: .info)
        return try Web.buildApplication(configuration: configuration.server, parts: parts, logger: logger,
                                                   tls: tls, onServing: onServing)
    }

    /// The secret the `/2.0/` sign-in verifiers are sealed with
    /// (`MobileVerifierSeal`), kept out of the database: the Last.fm API
    /// secret when people sign in (the same on every instance of a fleet),
    /// else a random key made once in the data directory (`mobile-sign-in.key`, mode 0600).
    func mobileVerifierSecret() throws -> Data {
        if configuration.lastFM.signsIn, let secret = configuration.lastFM.apiSecret { return Data(secret.utf8) }
        let file = configuration.dataDirectory.appendingPathComponent("mobile-sign-in.key")
        if let key = try? Data(contentsOf: file), key.count == 32 { return key }
        // With PostgreSQL nothing else may have made the data directory yet.
        try? FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let key = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        guard FileManager.default.createFile(atPath: file.path, contents: key, attributes: [.posixPermissions: 0o600]) else {
            throw SourceError.storage(detail: "The key file \(file.path) could not be written.")
        }
        return key
    }

    /// What the web app is made of, built from the configuration. With
    /// `readyingDemo` (as `serve` does) the demo is readied, or its people
    /// taken off a list it made; a command that only borrows the parts
    /// (`digest send`) changes neither.
    func webAppParts(readyingDemo: Bool = true) async throws -> WebAppParts {
        let directory = configuration.dataDirectory
        let storage = try await openStorage()
        let stores = storage.backend
        let lists = stores.lists
        let archive = stores.archive
        let demoOn = configuration.server.demo
        let demoCovers = DemoCoverCatalogue()
        if !readyingDemo {
            if demoOn { registerDemoCovers(demoCovers) }
        } else if demoOn {
            try await startDemo(lists: lists, archive: archive, covers: demoCovers)
        } else {
            try await leaveDemoOut(lists: lists, archive: archive)
        }
        let artwork = ArtworkStore(dataDirectory: directory, upstream: imageUpstream, imageBase: configuration.imageBase,
                                   demoCovers: demoCovers, maxDiskBytes: configuration.artCacheBytes, clock: clock,
                                   palettes: storage.palettes)
        let lastFM = lastFMClient(cache: storage.responseCache, permits: storage.permits)
        let outbox = stores.outbox
        // Last.fm takes scrobbles only with an account's session: with sign-in.
        var upstreams: [any ForwardingUpstream] = []
        if configuration.lastFM.signsIn { upstreams.append(LastFMForwarding(client: lastFM)) }
        upstreams.append(ListenBrainzForwarding(client: listenBrainz))
        var forwardingLogger = Logger(label: "vinylogue.forwarding")
        forwardingLogger.logLevel = logLevel(default: .info)
        var parts = WebAppParts(clock: clock, stores: stores, lastFM: lastFM, settings: try await CurrentSettings(store: lists, clock: clock),
                                audiences: try await Audiences(store: stores.accounts),
                                pages: try await PageRenderer.bundled(), artwork: artwork, demoCovers: demoCovers,
                                shareCards: ShareCardStore(dataDirectory: directory, artwork: artwork), background: background)
        parts.demo = demoOn ? demo : nil
        parts.listenBrainz = listenBrainz
        parts.listenBrainzPlaylists = { [listenBrainz] playlist, token throws(SourceError) in try await listenBrainz.save(playlist, token: token) }
        parts.musicServers = MusicServerAccess(policy: MusicServerPolicy(environmentValue: configuration.musicServerHosts),
                                               subsonic: { [self] in subsonic($0) })
        let lastFMPages = RecentTracksGateway { user, from, to, page, limit throws(SourceError) in
            try await lastFM.recentTracks(of: user, from: from, to: to, page: page, limit: limit)
        }
        let lbSync = listenBrainzSync(into: archive), clock = self.clock
        // Queueing a job wakes the job runner.
        let queued = Wakeup()
        let forwarding = ListenForwarding(outbox: outbox, upstreams: upstreams, clock: clock, wakeup: queued, logger: forwardingLogger)
        let forwarder = ListenForwarder(outbox: outbox, upstreams: upstreams, clock: clock, logger: forwardingLogger)
        let copies = HistoryCopyWorker(
            copies: stores.historyCopies,
            syncs: { user in user.service == .listenBrainz ? lbSync : ScrobbleSync(store: archive, gateway: lastFMPages, clock: clock) },
            clock: clock, queued: queued, concurrency: 8, lastFMPagesPerSecond: Double(configuration.lastFM.requestsPerSecond),
            // Anyone's view of an lb: user copies them (their own budget);
            // a Last.fm person's whole history only once they are on a list.
            mayCopyOnView: { [copiesLastFM = configuration.copiesHistories && configuration.lastFM.apiKey != nil] user in
                if user.service == .listenBrainz { return true }
                guard copiesLastFM else { return false }
                return (try? await lists.isListedByAnyone(user)) ?? false
            },
            // A copy has no page's deadline: it waits for Last.fm (and its
            // retries) as long as a sync does. Its requests use what page
            // views leave of the budget.
            context: { work in
                await AnswerDeadline.$current.withValue(nil) { await LastFMRequestPriority.$current.withValue(.background) { await work() } }
            },
            // A view's copy is queued once the page is answered, without
            // the page's deadline.
            later: { [background] work in
                _ = await background.start { await AnswerDeadline.$current.withValue(nil) { await work() } }
            },
            changes: parts.changes)
        parts.copies = copies
        parts.copiesHistories = configuration.copiesHistories && configuration.lastFM.apiKey != nil
        let uploads = UploadedImports(jobs: stores.importJobs, archive: archive, clock: clock,
                                      directory: directory.appendingPathComponent("uploads", isDirectory: true), wakeup: queued,
                                      changes: parts.changes, albums: archive)
        parts.uploads = uploads
        let refolding = AlbumRefolding(choices: archive, clock: clock, wakeup: queued, changes: parts.changes)
        parts.albumFolding = refolding
        var jobsLogger = Logger(label: "vinylogue.jobs")
        jobsLogger.logLevel = logLevel(default: .info)
        var handlers: [any JobHandler] = [uploads, copies, forwarder, refolding]
        if let access = parts.musicServers {
            var playlistLogger = Logger(label: "vinylogue.playlists")
            playlistLogger.logLevel = logLevel(default: .info)
            handlers.append(weeklyPlaylists(stores: stores, access: access, settings: parts.settings, logger: playlistLogger))
        }
        let runner = JobRunner(queue: stores.jobs, handlers: handlers, clock: clock, wakeup: queued, logger: jobsLogger)
        parts.jobs = runner
        jobRunner.withLock { $0 = runner }
        parts.forwarding = forwarding
        parts.mail = configuration.mail.map { MailSetup(delivery: mailTransport($0.server), from: $0.from) }
        if parts.mail != nil, readyingDemo, configuration.server.publicURL?.isEmpty != false {
            var digestLogger = Logger(label: "vinylogue.digests")
            digestLogger.logLevel = logLevel(default: .info)
            digestLogger.warning("\("VINYLOGUE_PUBLIC_URL is not set: the links in digests lead to \(configuration.server.publicBase) (serve's own address); set it to the address people reach the web app at")")
        }
        parts.patience = configuration.patience
        parts.signsIn = configuration.lastFM.signsIn
        parts.secureCookies = configuration.server.isPublicHTTPS
        parts.mobileVerifierSecret = try mobileVerifierSecret()
        return parts
    }
}

extension Composition {
    /// The weekly playlists kept on people's music servers, made from the
    /// archive as the week's playlist page makes them.
    func weeklyPlaylists(stores: any StoreBackend, access: MusicServerAccess, settings: CurrentSettings, logger: Logger) -> WeeklyPlaylists {
        let archive = stores.archive
        return WeeklyPlaylists(
            store: stores.musicServers, access: access, person: { await stores.person(of: $0) },
            timeZone: { await settings.current(for: $0).timeZone },
            playlist: { user, yearsAgo, now, zone throws(SourceError) in
                let folding = (try? await archive.albumFolding(of: user)) ?? .editions
                return try await archive.weekPlaylist(of: user, yearsAgo: yearsAgo, now: now, timeZone: zone, folding: folding)
            },
            clock: clock, logger: logger)
    }

    /// Sends `user`'s weekly digest of this week now, through the web
    /// app's queue and mail server (`vinylogue digest send`).
    public func sendDigestNow(to user: Username) async throws -> DigestSendReport {
        let parts = try await webAppParts(readyingDemo: false)
        var logger = Logger(label: "vinylogue.digests")
        logger.logLevel = logLevel(default: .error)
        return await WeeklyDigests.sendNow(for: user, parts: parts, configuration: configuration.server, logger: logger)
    }
}
