import Foundation
import HTTPServing
import Logging
import Stores
import Sync
import VinylogueCore
import Workers

extension WeeklyDigests {
    /// The digest of a web app made of `parts`, mailing through `mail`, its
    /// letters written with the web app's templates, its links pointing at
    /// `address`, its covers found as the album pages find them.
    package convenience init(parts: WebAppParts, mail: MailSetup, sources: ListeningSources, address: PublicAddress,
                             logger: Logger = Logger(label: "vinylogue.digests")) {
        let stores = parts.stores, settings = parts.settings
        let covers = CoverRoutes(sources: sources, demoCovers: parts.demoCovers, artwork: parts.artwork,
                                 albumCovers: AlbumCovers(store: stores.albumCovers, albums: parts.lastFM, clock: parts.clock))
        let artwork = parts.artwork
        self.init(store: stores.digests, mail: mail.delivery, from: mail.from, letters: DigestWriter(address: address, pages: parts.pages),
                  preferences: { owner in await settings.current(for: owner) }, sources: sources,
                  person: { owner in await stores.person(of: owner) },
                  keptPlaylist: { owner in try? await stores.musicServers.keptPlaylist(of: owner) },
                  cover: { user, entry in
                      // A person's own digest: nothing of theirs is concealed from them.
                      guard let found = await covers.address(user: user, artist: entry.artist, name: entry.name, mbid: entry.mbid,
                                                             concealing: .nobody),
                            let image = try? await artwork.image(for: found) else { return nil }
                      return (image.contentType, image.bytes)
                  },
                  clock: parts.clock, queued: parts.jobs?.wakeup ?? Wakeup(), logger: logger)
    }

    /// Sends `user`'s digest of this week now (`sendNow(_:of:jobs:)`),
    /// once the mail server and the public address are configured and
    /// `user` has a digest here. The command line's `vinylogue digest send`.
    public static func sendNow(for user: Username, parts: WebAppParts, configuration: HTTPServing.ServerConfiguration,
                               logger: Logger) async -> DigestSendReport {
        guard let mail = parts.mail else {
            return .notSent("No mail server is configured: set VINYLOGUE_SMTP_URL and VINYLOGUE_MAIL_FROM, then run this again.", .configuration)
        }
        guard configuration.publicURL?.isEmpty == false else {
            return .notSent("VINYLOGUE_PUBLIC_URL is not set, so the email's links would not lead to the web app: set it to the address "
                + "people reach it at (as for serve), then run this again.", .configuration)
        }
        let digests = WeeklyDigests(parts: parts, mail: mail, sources: parts.sources, address: PublicAddress(configuration), logger: logger)
        let subscription: DigestSubscription?
        do {
            var owner: ListOwner?
            if let account = try await parts.stores.accounts.account(named: user) {
                owner = account.owner
            } else if let me = try await parts.stores.lists.owned(by: .household).users().first(where: \.isMe), me.username.key == user.key {
                owner = .household
            }
            subscription = if let owner { try await digests.store.subscription(of: owner) } else { nil }
        } catch {
            return .notSent("The database could not be read (\(error)). Check that it is reachable, then run this again.", .upstream)
        }
        guard let subscription else {
            return .notSent("\(user.value) has no weekly digest here: give an address on Settings (“This week, years ago, by email”) first.",
                            .noDigest)
        }
        return await digests.sendNow(subscription, of: user, jobs: parts.stores.jobs)
    }
}
