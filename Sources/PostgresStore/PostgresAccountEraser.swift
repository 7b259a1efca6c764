import Foundation
import Logging
import PostgresNIO
import Stores
import VinylogueCore

/// `AccountEraser` on PostgreSQL: `AccountErasure`'s deletes in one
/// transaction, holding the archive's lock on the name (no import or copy
/// of it runs meanwhile), then the list entries naming the account on other
/// people's lists, and the saved Last.fm answers about it.
public struct PostgresAccountEraser: AccountEraser {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    public func erase(_ account: Account) async throws -> ErasedAccount {
        let id = account.id, nameKey = account.name.key, logger = database.logger
        return try await database.client.withTransaction(logger: logger) { connection in
            var tables = Set<String>()
            for try await name in try await connection.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()",
                                                              logger: logger).decode(String.self) { tables.insert(name) }
            // The account's row before anything: what queues work for it
            // (a digest) locks it `FOR SHARE` and waits, then finds no
            // account; or it queued first and this waited for it.
            try await connection.query("SELECT 1 FROM account WHERE id = \(id) FOR UPDATE", logger: logger)
            // The account's jobs first: a job's write in flight holds its
            // row (`JobFence`), so these wait for it to commit, and every
            // later write finds no claim. Then the archive's lock, which such
            // a write takes after its job's row: the same order, no deadlock.
            // The queue's rows before the uploads' (a batch's write locks
            // its job's row, then updates its upload's row).
            // Locked in key order first, as new listens lock their owner's
            // forwarding jobs (`PostgresForwardingOutbox.queueJobs`).
            try await connection.query("SELECT 1 FROM job WHERE person = \(nameKey) ORDER BY kind, key FOR UPDATE", logger: logger)
            try await connection.query("DELETE FROM job WHERE person = \(nameKey)", logger: logger)
            var owner = PostgresBindings()
            owner.append(id)
            try await connection.query(PostgresQuery(unsafeSQL: AccountErasure.digestJobs(placeholder: "$1"), binds: owner), logger: logger)
            var uploads: [String] = []
            for try await path in try await connection.query("DELETE FROM import_job WHERE owner = \(id) RETURNING path",
                                                              logger: logger).decode(String.self) {
                uploads.append(path)
            }
            try await connection.query("DELETE FROM history_copy WHERE name_key = \(nameKey)", logger: logger)
            let archiveUserID = try await PostgresScrobbleStore.userID(of: account.name, connection, logger)
            if let archiveUserID {
                try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresScrobbleStore.lockKey(archiveUserID)))", logger: logger)
            }
            var listing: [(owner: Int64, isMe: Bool)] = []
            let rows = try await connection.query("DELETE FROM list_entry WHERE key = \(nameKey) AND owner <> \(id) RETURNING owner, is_me",
                                                  logger: logger)
            for try await (owner, isMe) in rows.decode((Int64, Bool).self) { listing.append((owner, isMe)) }
            for (owner, isMe) in listing {
                try await connection.query("""
                    UPDATE list_entry l SET position = n.position FROM (
                        SELECT key, row_number() OVER (ORDER BY position) - 1 AS position FROM list_entry WHERE owner = \(owner)) n
                    WHERE l.owner = \(owner) AND l.key = n.key
                    """, logger: logger)
                if isMe { try await connection.query("UPDATE list_entry SET is_me = true WHERE owner = \(owner) AND position = 0", logger: logger) }
            }
            for rows in AccountErasure.rows where tables.contains(rows.table) {
                var binds = PostgresBindings()
                switch rows.key {
                case .accountID: binds.append(id)
                case .nameKey: binds.append(nameKey)
                case .archiveUserID:
                    guard let archiveUserID else { continue }
                    binds.append(archiveUserID)
                }
                try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(rows.table) WHERE \(rows.column) = $1", binds: binds), logger: logger)
            }
            var saved: [String] = []
            let fragment = AccountErasure.savedAnswerFragment(nameKey)
            for try await key in try await connection.query("SELECT key FROM lastfm_response WHERE strpos(lower(key), \(fragment)) > 0",
                                                             logger: logger).decode(String.self) {
                if AccountErasure.savedAnswer(key, isAbout: nameKey) { saved.append(key) }
            }
            if !saved.isEmpty { try await connection.query("DELETE FROM lastfm_response WHERE key = ANY(\(saved))", logger: logger) }
            return ErasedAccount(uploads: uploads, listedBy: listing.map { ListOwner(id: $0.owner) })
        }
    }
}
