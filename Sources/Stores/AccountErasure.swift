import Foundation
import VinylogueCore

/// Everything of an account, deleted in one transaction: what "Delete my
/// account" does. `SQLiteAccountEraser` and `PostgresAccountEraser` carry
/// out the same `AccountErasure` (one list of what goes, written once).
public protocol AccountEraser: Sendable {
    /// Deletes `account` and everything of it: its sessions (web and
    /// players'), listen token, list, settings, forwarding choices and
    /// outbox, uploaded exports, the archive of its Last.fm name (scrobbles,
    /// set-aside listens, kept charts, sync and copy state), the Last.fm
    /// answers saved about that name, and its place on other people's lists
    /// (their order closes up; when it was someone's "me", their first
    /// becomes "me"). All or nothing.
    func erase(_ account: Account) async throws -> ErasedAccount
}

/// What an erasure left for its caller to finish outside the database.
public struct ErasedAccount: Sendable, Equatable {
    /// The uploaded files its import jobs named, to be deleted.
    public let uploads: [String]
    /// The owners whose lists named it.
    public let listedBy: [ListOwner]

    public init(uploads: [String], listedBy: [ListOwner]) {
        self.uploads = uploads
        self.listedBy = listedBy
    }
}

/// What erasing an account deletes, table by table, the same on both
/// stores (a table a store does not have is passed over).
public enum AccountErasure {
    /// Which of the account's keys a table's rows are found by.
    public enum Key: Sendable {
        /// The account's id (its `ListOwner`).
        case accountID
        /// Its Last.fm name, case-folded.
        case nameKey
        /// The id of its name's row in the archive.
        case archiveUserID
    }

    /// One `DELETE FROM table WHERE column = key`.
    public struct Rows: Sendable {
        public let table: String
        public let column: String
        public let key: Key
    }

    /// Deletes the account's emails' jobs (`JobKind.digest`, keyed by
    /// their `digest_send` row's id, `placeholder` binding the account's
    /// id), whatever person they name: run after the person's own jobs
    /// and before the emails' rows, the order an email's end locks them
    /// in, so a send in flight writes nothing after the erasure.
    public static func digestJobs(placeholder: String) -> String {
        "DELETE FROM job WHERE kind = '\(JobKind.digest.rawValue)' AND key IN (SELECT CAST(id AS TEXT) FROM digest_send WHERE owner = \(placeholder))"
    }

    /// In order: rows before the rows they name.
    public static let rows: [Rows] = [
        Rows(table: "job", column: "person", key: .nameKey),
        Rows(table: "web_session", column: "account_id", key: .accountID),
        Rows(table: "mobile_session", column: "owner", key: .accountID),
        Rows(table: "listen_token", column: "owner", key: .accountID),
        Rows(table: "owner_setting", column: "owner", key: .accountID),
        Rows(table: "forwarding", column: "owner", key: .accountID),
        Rows(table: "music_server", column: "owner", key: .accountID),
        Rows(table: "forward_outbox", column: "owner", key: .accountID),
        Rows(table: "import_job", column: "owner", key: .accountID),
        Rows(table: "digest_send", column: "owner", key: .accountID),
        Rows(table: "digest_subscription", column: "owner", key: .accountID),
        Rows(table: "list_entry", column: "owner", key: .accountID),
        Rows(table: "history_copy", column: "name_key", key: .nameKey),
        Rows(table: "album_folding", column: "name_key", key: .nameKey),
        Rows(table: "album_choice", column: "name_key", key: .nameKey),
        Rows(table: "scrobble", column: "user_id", key: .archiveUserID),
        Rows(table: "scrobble_echo", column: "user_id", key: .archiveUserID),
        Rows(table: "weekly_chart", column: "user_id", key: .archiveUserID),
        Rows(table: "weekly_play", column: "user_id", key: .archiveUserID),
        Rows(table: "chart_recount", column: "user_id", key: .archiveUserID),
        Rows(table: "album_release", column: "user_id", key: .archiveUserID),
        Rows(table: "album_release_group", column: "user_id", key: .archiveUserID),
        Rows(table: "sync_state", column: "user_id", key: .archiveUserID),
        Rows(table: "generated_history", column: "user_id", key: .archiveUserID),
        Rows(table: "archive_user", column: "id", key: .archiveUserID),
        Rows(table: "account", column: "id", key: .accountID),
    ]

    /// Whether a saved Last.fm answer's key (`method&name=value&…`) is
    /// about `nameKey` (its `user` parameter, in any case).
    public static func savedAnswer(_ key: String, isAbout nameKey: String) -> Bool {
        key.split(separator: "&").contains { parameter in
            parameter.hasPrefix("user=") && Username(validating: String(parameter.dropFirst(5)))?.key == nameKey
        }
    }

    /// A lowercase fragment every saved answer about `nameKey` contains,
    /// for a first cut in SQL (`savedAnswer(_:isAbout:)` decides).
    public static func savedAnswerFragment(_ nameKey: String) -> String { "user=" + nameKey }
}
