import Artwork
import Foundation
import HTTPServing
import LastFM
import ListenBrainz
import Logging
import Mail
import SQLiteStore
import Stores
import Sync
import VinylogueCore
import Web

/// Everything Vinylogue can be told, read once: from the environment here,
/// then refined by a command's options. Nothing else reads the environment.
public struct VinylogueConfiguration: Sendable {
    /// Where users, settings, caches, art and the archive live
    /// (`--data-dir`; default `$XDG_DATA_HOME/vinylogue`, else
    /// `~/.local/share/vinylogue`).
    public var dataDirectory: URL
    /// Last.fm's key, address and manners (`LASTFM_API_KEY`,
    /// `LASTFM_API_URL`, `LASTFM_REQUESTS_PER_SECOND`).
    public var lastFM: LastFMConfiguration
    /// ListenBrainz's address (`LISTENBRAINZ_API_URL`, the API root
    /// without `/1/`; default https://api.listenbrainz.org).
    public var listenBrainz: ListenBrainzConfiguration
    /// Where album art is fetched from (`LASTFM_IMAGE_URL`).
    public var imageBase: String
    /// `VINYLOGUE_LOG_LEVEL`; nil leaves each command its default.
    public var logLevel: Logger.Level?
    /// A PostgreSQL database for accounts, sessions, lists and settings
    /// (`DATABASE_URL`, `serve --database`); nil keeps them in SQLite under
    /// the data directory. Never logged: it may carry a password.
    public var databaseURL: String?
    /// How the web app is served (`serve`'s options; `VINYLOGUE_PUBLIC_URL`,
    /// `VINYLOGUE_TLS_CERTIFICATE` with `VINYLOGUE_TLS_KEY`,
    /// `VINYLOGUE_LISTEN_RATE_LIMIT`).
    public var server: ServerConfiguration
    /// At most this much album art on disk (`--art-cache-mb`); nil: no limit.
    public var artCacheBytes: Int64?
    /// The mail server the weekly digest goes out through
    /// (`VINYLOGUE_SMTP_URL`, `VINYLOGUE_MAIL_FROM`, and
    /// `VINYLOGUE_SMTP_CA_FILE` for a server whose certificate a private
    /// authority signed); nil: no email, and Settings says so.
    public var mail: MailConfiguration?
    /// How long pages wait for slow work they can do without.
    public var patience: Patience
    /// Whether the web app copies Last.fm people's whole histories into
    /// the archive by itself: an account's at sign-in, and everyone on a
    /// list at their first view (`VINYLOGUE_COPY_HISTORIES`, on unless
    /// `off`). `lb:` people are copied on view either way: nothing else
    /// charts them.
    public var copiesHistories: Bool
    /// Hosts on private networks people's music servers may be at
    /// (`VINYLOGUE_MUSIC_SERVERS`, comma-separated names, `*.suffix`
    /// patterns, addresses and `a.b.c.*` prefixes); public addresses are
    /// always allowed (`MusicServerPolicy`).
    public var musicServerHosts: String?
    /// `NO_COLOR` is set (to anything but the empty string).
    public var noColour: Bool
    /// `TERM=dumb`: no colour, no progress bar.
    public var dumbTerminal: Bool
    /// What "now" is: the machine's clock, or, for tests of dates that
    /// matter (year ends, Feb 29, a week's first hours), a clock started
    /// at `VINYLOGUE_TEST_NOW` (ISO 8601 or seconds since 1970) that runs
    /// on from there. Not for production: it moves every chart.
    public var clock: WallClock
    /// Sentences about environment variables that were set but could not
    /// be understood; a command stops on the first (exit 4) rather than
    /// run on a default its caller did not ask for.
    public var problems: [String] = []

    /// The configuration `environment` describes.
    public init(environment: [String: String]) {
        dataDirectory = ArchiveDatabase.defaultDirectory(environment: environment)
        lastFM = LastFMConfiguration.from(environment: environment)
        listenBrainz = ListenBrainzConfiguration(
            apiRoot: environment["LISTENBRAINZ_API_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? ListenBrainzConfiguration.defaultAPIRoot)
        imageBase = environment["LASTFM_IMAGE_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? ArtworkAddress.lastFMImageBase
        logLevel = environment["VINYLOGUE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
        databaseURL = environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        server = ServerConfiguration()
        server.publicURL = environment["VINYLOGUE_PUBLIC_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let certificate = environment["VINYLOGUE_TLS_CERTIFICATE"], !certificate.isEmpty,
           let key = environment["VINYLOGUE_TLS_KEY"], !key.isEmpty {
            server.tls = ServerConfiguration.TLSFiles(certificatePath: certificate, keyPath: key)
        }
        server.sitePassword = environment["VINYLOGUE_SITE_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        musicServerHosts = environment["VINYLOGUE_MUSIC_SERVERS"].flatMap { $0.isEmpty ? nil : $0 }
        if let limit = environment["VINYLOGUE_LISTEN_RATE_LIMIT"].flatMap({ Int($0) }), limit >= 0 { server.listenRateLimit = limit }
        if let megabytes = environment["VINYLOGUE_MAX_UPLOAD_MB"], !megabytes.isEmpty {
            if let value = Int(megabytes), (1...65_536).contains(value) {
                server.maxUploadBytes = value << 20
            } else {
                problems.append("VINYLOGUE_MAX_UPLOAD_MB is “\(megabytes)”: give the largest export people may upload, in megabytes "
                    + "(1 to 65536), or unset it for 512.")
            }
        }
        artCacheBytes = ArtworkStore.defaultMaxDiskBytes
        let smtp = environment["VINYLOGUE_SMTP_URL"].flatMap { $0.isEmpty ? nil : $0 }
        let sender = environment["VINYLOGUE_MAIL_FROM"].flatMap { $0.isEmpty ? nil : $0 }
        switch (smtp, sender) {
        case (nil, nil): break
        case (_?, nil):
            problems.append("VINYLOGUE_SMTP_URL is set but VINYLOGUE_MAIL_FROM is not: give the address digests come from "
                + "(vinylogue@example.org), or unset both to send no email.")
        case (nil, _?):
            problems.append("VINYLOGUE_MAIL_FROM is set but VINYLOGUE_SMTP_URL is not: give the mail server as "
                + "smtp://user:password@host:587 or smtps://user:password@host:465, or unset both to send no email.")
        case let (url?, from?):
            do throws(MailConfigurationError) {
                let server = try SMTPConfiguration.parse(url: url, caFile: environment["VINYLOGUE_SMTP_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 })
                if let address = MailAddress(from) {
                    mail = MailConfiguration(server: server, from: address)
                } else {
                    problems.append("VINYLOGUE_MAIL_FROM is “\(from)”: give one address digests come from, such as vinylogue@example.org.")
                }
            } catch {
                problems.append(error.message)
            }
        }
        patience = Patience()
        copiesHistories = true
        switch environment["VINYLOGUE_COPY_HISTORIES"]?.lowercased() {
        case nil, "", "on", "1", "true", "yes": break
        case "off", "0", "false", "no": copiesHistories = false
        case let other?:
            problems.append("VINYLOGUE_COPY_HISTORIES is “\(other)”: set it to on (the default) or off, or unset it.")
        }
        noColour = !(environment["NO_COLOR"] ?? "").isEmpty
        dumbTerminal = environment["TERM"] == "dumb"
        clock = .system
        if let testNow = environment["VINYLOGUE_TEST_NOW"], !testNow.isEmpty {
            if let start = WallClock.instant(testNow) {
                clock = .running(from: start)
            } else {
                problems.append("VINYLOGUE_TEST_NOW is “\(testNow)”: give an instant as ISO 8601 with a zone "
                    + "(2024-02-29T11:59:00Z) or seconds since 1970, or unset it.")
            }
        }
    }

    /// The configuration this process's environment describes: the one
    /// place Vinylogue reads its environment.
    public static func fromProcessEnvironment() -> VinylogueConfiguration {
        VinylogueConfiguration(environment: ProcessInfo.processInfo.environment)
    }

    /// `option` (`--data-dir`) when given, else the configured directory.
    public func dataDirectory(_ option: String?) -> URL {
        if let option, !option.isEmpty { return URL(fileURLWithPath: option, isDirectory: true).standardizedFileURL }
        return dataDirectory
    }
}

/// Where email goes out: the mail server, and the address it comes from.
public struct MailConfiguration: Sendable {
    public var server: SMTPConfiguration
    public var from: MailAddress

    public init(server: SMTPConfiguration, from: MailAddress) {
        self.server = server
        self.from = from
    }
}
