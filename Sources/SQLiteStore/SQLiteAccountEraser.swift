import Foundation
import GRDB
import Stores
import VinylogueCore

/// `AccountEraser` on SQLite: `AccountErasure`'s deletes in one write
/// transaction (synced like every commit), then the list entries naming the
/// account on other people's lists, and the saved Last.fm answers about it.
public struct SQLiteAccountEraser: AccountEraser {
    let writer: any DatabaseWriter

    public init(_ database: ArchiveDatabase) { writer = database.writer }

    public func erase(_ account: Account) async throws -> ErasedAccount {
        let id = account.id, nameKey = account.name.key
        return try await writer.write { db in
            let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
            let archiveUserID = try Int64.fetchOne(db, sql: "SELECT id FROM archive_user WHERE name_key = ?", arguments: [nameKey])
            let uploads = try String.fetchAll(db, sql: "SELECT path FROM import_job WHERE owner = ?", arguments: [id])
            // Other people's lists close up where it was; a "me" passes to their first.
            let listing = try Row.fetchAll(db, sql: "SELECT owner, isMe FROM list_entry WHERE key = ? AND owner != ?", arguments: [nameKey, id])
            try db.execute(sql: "DELETE FROM list_entry WHERE key = ?", arguments: [nameKey])
            for row in listing {
                let owner: Int64 = row["owner"]
                try db.execute(sql: """
                    UPDATE list_entry SET position = (SELECT count(*) FROM list_entry e WHERE e.owner = list_entry.owner AND e.position < list_entry.position)
                    WHERE owner = ?
                    """, arguments: [owner])
                if row["isMe"] as Bool {
                    try db.execute(sql: "UPDATE list_entry SET isMe = 1 WHERE owner = ? AND position = 0", arguments: [owner])
                }
            }
            if tables.contains("job"), tables.contains("digest_send") {
                try db.execute(sql: AccountErasure.digestJobs(placeholder: "?"), arguments: [id])
            }
            for rows in AccountErasure.rows where tables.contains(rows.table) {
                let value: (any DatabaseValueConvertible)?
                switch rows.key {
                case .accountID: value = id
                case .nameKey: value = nameKey
                case .archiveUserID: value = archiveUserID
                }
                guard let value else { continue }
                try db.execute(sql: "DELETE FROM \(rows.table) WHERE \(rows.column) = ?", arguments: [value])
            }
            let saved = try String.fetchAll(db, sql: "SELECT key FROM response_cache WHERE instr(lower(key), ?) > 0",
                                            arguments: [AccountErasure.savedAnswerFragment(nameKey)])
            for key in saved where AccountErasure.savedAnswer(key, isAbout: nameKey) {
                try db.execute(sql: "DELETE FROM response_cache WHERE key = ?", arguments: [key])
            }
            return ErasedAccount(uploads: uploads, listedBy: listing.map { ListOwner(id: $0["owner"]) })
        }
    }
}
