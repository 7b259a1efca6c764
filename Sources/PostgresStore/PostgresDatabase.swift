import Stores
import Foundation
import Logging
import PostgresNIO

/// A PostgreSQL database holding Vinylogue's stores: a pool of connections
/// and the schema, migrated once per start under an advisory lock, so
/// several instances starting together on one database migrate it once.
///
/// The pool runs while `run()` does (the server adds it to its services;
/// `with(url:_:)` runs it around a body).
public final class PostgresDatabase: Sendable {
    public let client: PostgresClient
    let logger: Logger
    /// Where the listens players send wait to be kept together.
    let listenGroups: PostgresListenGroups

    /// `url` is `postgres://user:password@host:port/database`, optionally
    /// with `?sslmode=disable|prefer|require` (default: prefer).
    public init(url: String, maximumConnections: Int = 20, logger: Logger = Logger(label: "vinylogue.postgres")) throws(PostgresURLProblem) {
        var configuration = try Self.configuration(url)
        configuration.options.maximumConnections = maximumConnections
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
        self.listenGroups = PostgresListenGroups(client: client, logger: logger)
    }

    /// Whether the database answers a trivial query now.
    public func isReachable() async -> Bool {
        do {
            for try await _ in try await client.query("SELECT 1", logger: logger).decode(Int32.self) {}
            return true
        } catch {
            return false
        }
    }

    /// Runs the connection pool until the task is cancelled.
    public func run() async { await client.run() }

    /// Runs the pool, migrates the schema, and gives `body` the database;
    /// the pool stops when `body` returns.
    @discardableResult
    public static func with<T: Sendable>(url: String, maximumConnections: Int = 20,
                                         _ body: @Sendable (PostgresDatabase) async throws -> T) async throws -> T {
        // Errors only: the pool warns when it is first asked for a
        // connection a moment before `run()` below has started, which is harmless.
        var logger = Logger(label: "vinylogue.postgres")
        logger.logLevel = .error
        let database = try PostgresDatabase(url: url, maximumConnections: maximumConnections, logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await database.run(); return nil }
            defer { group.cancelAll() }
            try await database.migrate()
            return try await body(database)
        }
    }

    /// A new, empty database on the server `serverURL` points at (any
    /// database there, reached as a user who may create databases), given
    /// to `body` by its URL and dropped afterwards, however `body` ends: for
    /// tests and benchmarks.
    public static func withTemporaryDatabase<T: Sendable>(server serverURL: String,
                                                          _ body: @Sendable (String) async throws -> T) async throws -> T {
        let name = "scratch_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await with(url: serverURL, maximumConnections: 1) { server in
            try await server.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        var parts = URLComponents(string: serverURL)
        parts?.path = "/" + name
        guard let url = parts?.string else { throw PostgresURLProblem(url: serverURL) }
        func drop() async throws {
            try await with(url: serverURL, maximumConnections: 1) { server in
                try await server.client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
            }
        }
        do {
            let result = try await body(url)
            try await drop()
            return result
        } catch {
            try? await drop()
            throw error
        }
    }

    /// The pool's configuration for `url`.
    static func configuration(_ url: String) throws(PostgresURLProblem) -> PostgresClient.Configuration {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme?.lowercased() ?? ""),
              let host = parts.host, !host.isEmpty, let user = parts.user, !user.isEmpty else {
            throw PostgresURLProblem(url: url)
        }
        let database = String(parts.path.drop { $0 == "/" })
        let tls: PostgresClient.Configuration.TLS
        switch parts.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
        case "disable": tls = .disable
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(host: host, port: parts.port ?? 5432, username: user.removingPercentEncoding ?? user,
                                                         password: parts.password?.removingPercentEncoding,
                                                         database: database.isEmpty ? nil : database, tls: tls)
        // Every query here reads or writes one person's few rows; the JIT
        // only ever costs. The every-year chart's estimate (14 weeks) made
        // PostgreSQL compile it each time: 266 ms, against 1.2 ms a week.
        configuration.options.additionalStartupParameters = [("jit", "off")]
        return configuration
    }

    /// One schema change: statements run in order, in one transaction.
    struct Migration {
        typealias Work = @Sendable (PostgresConnection, Logger, MigrationProgress?) async throws -> Void
        let name: String
        let statements: [String]
        /// Work done in Swift after the statements, in the same transaction.
        let then: Work?

        init(name: String, statements: [String], then: Work? = nil) {
            self.name = name
            self.statements = statements
            self.then = then
        }
    }

    /// Every schema change, in order. Append; never edit a landed one.
    /// Tables of personal rows are keyed by their owner first, so they can
    /// be hash-partitioned (or distributed with Citus) by owner later.
    static let migrations: [Migration] = [
        Migration(name: "accounts-sessions-lists-settings", statements: [
            """
            CREATE TABLE account (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                name_key TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                lastfm_session_key TEXT NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                signed_in_at TIMESTAMPTZ NOT NULL)
            """,
            """
            CREATE TABLE web_session (
                token_digest TEXT PRIMARY KEY,
                account_id BIGINT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                created_at TIMESTAMPTZ NOT NULL,
                expires_at TIMESTAMPTZ NOT NULL)
            """,
            "CREATE INDEX web_session_account ON web_session(account_id)",
            "CREATE INDEX web_session_expiry ON web_session(expires_at)",
            """
            CREATE TABLE list_entry (
                owner BIGINT NOT NULL,
                key TEXT NOT NULL,
                name TEXT NOT NULL,
                position BIGINT NOT NULL,
                is_me BOOLEAN NOT NULL DEFAULT false,
                PRIMARY KEY (owner, key))
            """,
            """
            CREATE TABLE owner_setting (
                owner BIGINT NOT NULL,
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (owner, key))
            """,
        ]),
        Migration(name: "lastfm-responses-and-permits", statements: [
            """
            CREATE TABLE lastfm_response (
                key TEXT PRIMARY KEY,
                body BYTEA NOT NULL,
                stored_at TIMESTAMPTZ NOT NULL,
                expires_at TIMESTAMPTZ NOT NULL)
            """,
            """
            CREATE TABLE lastfm_permit (
                slot INT PRIMARY KEY,
                available_at TIMESTAMPTZ NOT NULL DEFAULT '-infinity',
                held BOOLEAN NOT NULL DEFAULT false)
            """,
        ]),
        // The scrobble archive: rows keyed by (user, instant, artist, track),
        // user first, as in SQLite (see `PostgresScrobbleStore`).
        Migration(name: "scrobble-archive", statements: [
            """
            CREATE TABLE archive_user (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                name_key TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL)
            """,
            """
            CREATE TABLE scrobble (
                user_id BIGINT NOT NULL REFERENCES archive_user(id) ON DELETE CASCADE,
                instant BIGINT NOT NULL,
                artist TEXT NOT NULL,
                track TEXT NOT NULL,
                album TEXT NOT NULL,
                artist_mbid TEXT,
                album_mbid TEXT,
                track_mbid TEXT,
                source SMALLINT NOT NULL,
                PRIMARY KEY (user_id, instant, artist, track))
            """,
            """
            CREATE TABLE sync_state (
                user_id BIGINT PRIMARY KEY REFERENCES archive_user(id) ON DELETE CASCADE,
                from_instant BIGINT NOT NULL,
                to_instant BIGINT NOT NULL,
                next_page INT NOT NULL,
                total_pages INT NOT NULL,
                page_size INT NOT NULL)
            """,
            """
            CREATE TABLE generated_history (
                user_id BIGINT PRIMARY KEY REFERENCES archive_user(id) ON DELETE CASCADE,
                seed BIGINT NOT NULL,
                first_week BIGINT NOT NULL,
                generated_through BIGINT NOT NULL)
            """,
        ]),
        // Album palettes, shared by the fleet (`PostgresPaletteStore`).
        Migration(name: "album-palettes", statements: [
            """
            CREATE TABLE album_palette (
                address TEXT PRIMARY KEY,
                version INT NOT NULL,
                colours TEXT NOT NULL)
            """,
        ]),
        // The foreign key from each scrobble to its user was checked row by
        // row: 4.5 of the 6.9 s that storing 1,000,000 scrobbles took. Rows
        // are only ever written with their user's row in the same
        // transaction, and a user's rows are deleted with them explicitly.
        Migration(name: "scrobble-without-row-by-row-user-check", statements: [
            "ALTER TABLE scrobble DROP CONSTRAINT IF EXISTS scrobble_user_id_fkey",
        ]),
        // Weekly rollups as plays per spelling; their counting was dropped
        // when "weekly-charts" replaced the table.
        Migration(name: "weekly-rollups", statements: PostgresScrobbleStore.rollupTable),
        // Remembered album covers, shared by the fleet (`PostgresAlbumCoverStore`).
        Migration(name: "album-covers", statements: [
            """
            CREATE TABLE album_cover (
                artist_key TEXT NOT NULL,
                album_key TEXT NOT NULL,
                artist TEXT NOT NULL,
                album TEXT NOT NULL,
                address TEXT,
                resolved_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (artist_key, album_key))
            """,
        ]),
        // Kept weekly charts (`PostgresWeeklyRollup.swift`), counted for what is archived.
        // Counted by "weekly-charts-editions-folded", which counts every
        // week again: a database older than both is counted once.
        Migration(name: "weekly-charts", statements: PostgresScrobbleStore.chartTable),
        // Listen-submission tokens by their SHA-256 digest, one per owner (`PostgresListenTokenStore`).
        Migration(name: "listen-tokens", statements: [
            """
            CREATE TABLE listen_token (
                owner BIGINT PRIMARY KEY,
                token_digest TEXT NOT NULL UNIQUE,
                created_at TIMESTAMPTZ NOT NULL)
            """,
        ]),
        // Session keys of the Last.fm-compatible API by their SHA-256 digest, tied to
        // the token they were made with, and each token's sealed mobile sign-in
        // verifier (`PostgresMobileSessionStore`, `PostgresListenTokenStore`).
        Migration(name: "mobile-sessions", statements: [
            "ALTER TABLE listen_token ADD COLUMN mobile_verifier TEXT",
            """
            CREATE TABLE mobile_session (
                owner BIGINT NOT NULL,
                session_digest TEXT NOT NULL UNIQUE,
                token_digest TEXT NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (owner, session_digest))
            """,
        ]),
        // The forwarding outbox and each owner's choice of services (`PostgresForwardingOutbox`).
        Migration(name: "forwarding-outbox", statements: PostgresForwardingOutbox.tables),
        // Listens set aside as the same play as one that counts (`SameListenRule`),
        // so the archive is the same whatever order listens come in. Ids '' when unknown.
        Migration(name: "scrobble-echoes", statements: [
            """
            CREATE TABLE scrobble_echo (
                user_id BIGINT NOT NULL,
                instant BIGINT NOT NULL,
                artist TEXT NOT NULL,
                track TEXT NOT NULL,
                album TEXT NOT NULL,
                artist_mbid TEXT NOT NULL,
                album_mbid TEXT NOT NULL,
                track_mbid TEXT NOT NULL,
                source SMALLINT NOT NULL,
                PRIMARY KEY (user_id, instant, artist, track, album, artist_mbid, album_mbid, track_mbid))
            """,
        ]),
        // History copies as durable jobs (`PostgresHistoryCopyStore`).
        Migration(name: "history-copies", statements: PostgresHistoryCopyStore.tables),
        Migration(name: "history-copy-totals", statements: PostgresHistoryCopyStore.totals),
        // Uploaded exports as durable jobs (`PostgresImportJobStore`).
        Migration(name: "import-jobs", statements: PostgresImportJobStore.tables),
        // Who may see each account's listening (`Visibility`).
        Migration(name: "account-visibility", statements: ["ALTER TABLE account ADD COLUMN visibility TEXT NOT NULL DEFAULT 'everyone'"]),
        // Weekly digest subscriptions and their send queue (`PostgresDigestStore`).
        Migration(name: "digests", statements: PostgresDigestStore.tables),
        // What each batch of an uploaded import stored (`StoredBatches`).
        Migration(name: "import-job-stored-batches", statements: ["ALTER TABLE import_job ADD COLUMN stored_batches TEXT NOT NULL DEFAULT ''"]),
        // Every job that outlives a request in one queue (`PostgresJobQueue`),
        // the uploads waiting in `import_job` moved into it.
        Migration(name: "one-job-queue", statements: PostgresJobQueue.tables, then: PostgresJobQueue.movedUploads),
        // History copies run by the one queue (`PostgresHistoryCopyStore`).
        Migration(name: "history-copies-in-the-job-queue", statements: [], then: PostgresHistoryCopyStore.movedToJobQueue),
        // Forwarding run by the one queue: a job per owner and service (`PostgresForwardingOutbox`).
        Migration(name: "forwarding-in-the-job-queue", statements: PostgresForwardingOutbox.movedToJobQueue),
        // Digest emails run by the one queue (`PostgresDigestStore`).
        Migration(name: "digests-in-the-job-queue", statements: [], then: PostgresDigestStore.movedToJobQueue),
        // Editions of an album became one album (`AlbumIdentity`): every
        // week's charts counted again, keys and all.
        // Each person's choice of how their albums group (`AlbumChoices`).
        Migration(name: "album-folding-choices", statements: PostgresScrobbleStore.foldingTable),
        Migration(name: "weekly-charts-editions-folded", statements: ["DELETE FROM weekly_chart"], then: PostgresScrobbleStore.countCharts),
        // Choices about single albums, and the weeks they have to count again.
        Migration(name: "album-choices", statements: PostgresScrobbleStore.choiceTables),
        // Albums tied by MusicBrainz release (`PostgresAlbumReleases.swift`).
        Migration(name: "album-releases", statements: PostgresScrobbleStore.releaseTables, then: PostgresScrobbleStore.tieReleases),
        // Listens keep the album artist and release group their player named
        // (`Scrobble.albumArtist`, `releaseGroupMBID`): NULL where none was,
        // as for every listen before. No row is rewritten.
        Migration(name: "album-artists-and-release-groups", statements: [
            "ALTER TABLE scrobble ADD COLUMN album_artist TEXT, ADD COLUMN release_group_mbid TEXT",
            "ALTER TABLE scrobble_echo ADD COLUMN album_artist TEXT, ADD COLUMN release_group_mbid TEXT",
            "ALTER TABLE forward_outbox ADD COLUMN album_artist TEXT, ADD COLUMN release_group_mbid TEXT",
        ]),
        // The key index a write's new ties are followed by (`PostgresAlbumReleases.swift`).
        Migration(name: "album-releases-by-key", statements: ["CREATE INDEX album_release_key ON album_release(user_id, key)"]),
        Migration(name: "music-servers", statements: [PostgresMusicServers.table]),
        Migration(name: "kept-playlists", statements: [PostgresMusicServers.keptColumnsAdded]),
    ]

    /// Applies the migrations this database has not had, holding an
    /// advisory lock so that concurrent starts wait for one another; a
    /// long one tells `progress` how far it is.
    public func migrate(progress: MigrationProgress? = nil) async throws {
        let logger = self.logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migration (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                """, logger: logger)
            var applied: Set<String> = []
            for try await name in try await connection.query("SELECT name FROM schema_migration", logger: logger).decode(String.self) {
                applied.insert(name)
            }
            for migration in Self.migrations where !applied.contains(migration.name) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await migration.then?(connection, logger, progress)
                try await connection.query("INSERT INTO schema_migration(name) VALUES (\(migration.name))", logger: logger)
            }
        }
    }

    /// The advisory lock key that serialises migrations ("vinylogu" in ASCII).
    static let migrationLock: Int64 = 0x76696E796C6F6775
}

/// A database URL that cannot be used, said so.
public struct PostgresURLProblem: Error, CustomStringConvertible {
    let url: String
    public var description: String {
        "The database address must look like postgres://user:password@host:5432/database (got one that does not)."
    }
}
