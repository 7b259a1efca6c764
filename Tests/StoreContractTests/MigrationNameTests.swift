import GRDB
import Testing
@testable import PostgresStore
@testable import SQLiteStore

/// Every data directory and database in use records the migrations it has
/// had by name. A renamed or reordered migration would run again (and fail
/// on a table that exists) or be skipped, so the two lists are frozen here:
/// a new migration is added at the end of its list, and to this test.
@Suite struct MigrationNameTests {
    @Test func sqliteMigrationsKeepTheirNamesAndOrder() {
        #expect(ArchiveDatabase.migrator(progress: nil).migrations == [
            "v1-listed-users-and-settings",
            "v1-response-cache",
            "scrobble archive v1",
            "lists-and-settings-by-owner",
            "accounts-and-sessions",
            "weekly rollups v1",
            "weekly rollups v2: album keys",
            "weekly charts v3",
            "album covers v1",
            "listen-tokens",
            "listen-token-mobile-verifier",
            "mobile-sessions",
            "forwarding outbox",
            "scrobble echoes",
            "history copies",
            "history copy totals",
            "import jobs",
            "account-visibility",
            "digests",
            "import job stored batches", "one job queue", "history copies in the job queue",
            "forwarding in the job queue", "digests in the job queue", "album folding choices", "weekly charts v4: editions folded", "album choices of single albums", "albums tied by MusicBrainz release",
            "listens keep their album artist and release group", "album releases found by key", "music servers", "kept playlists",
        ])
    }

    @Test func postgresMigrationsKeepTheirNamesAndOrder() {
        #expect(PostgresDatabase.migrations.map(\.name) == [
            "accounts-sessions-lists-settings",
            "lastfm-responses-and-permits",
            "scrobble-archive",
            "album-palettes",
            "scrobble-without-row-by-row-user-check",
            "weekly-rollups",
            "album-covers",
            "weekly-charts",
            "listen-tokens",
            "mobile-sessions",
            "forwarding-outbox",
            "scrobble-echoes",
            "history-copies",
            "history-copy-totals",
            "import-jobs",
            "account-visibility",
            "digests",
            "import-job-stored-batches", "one-job-queue", "history-copies-in-the-job-queue",
            "forwarding-in-the-job-queue", "digests-in-the-job-queue", "album-folding-choices", "weekly-charts-editions-folded", "album-choices", "album-releases",
            "album-artists-and-release-groups", "album-releases-by-key", "music-servers", "kept-playlists",
        ])
    }
}
