import Archive
import Logging
import PostgresNIO
import VinylogueCore

/// `ArchiveChangeNotices` through PostgreSQL's `NOTIFY` and `LISTEN` on the
/// channel `vinylogue_archive_changed`, the person's name as the payload:
/// every instance on the database hears each announcement (its own too).
/// A notice is a hint, not data: one missed while an instance reconnects
/// costs at most a page kept until it expires.
public struct PostgresArchiveChangeNotices: ArchiveChangeNotices {
    let database: PostgresDatabase
    let logger: Logger
    /// How long to wait before listening again after the connection was lost.
    let reconnectDelay: Duration

    static let channel = "vinylogue_archive_changed"

    public init(_ database: PostgresDatabase, logger: Logger = Logger(label: "vinylogue.postgres"), reconnectDelay: Duration = .seconds(1)) {
        self.database = database
        self.logger = logger
        self.reconnectDelay = reconnectDelay
    }

    public func announce(_ user: Username) async {
        do {
            try await database.client.query("SELECT pg_notify(\(Self.channel), \(user.value))", logger: logger)
        } catch {
            logger.warning("could not tell the other instances that \(user.value)'s listens changed: \(String(reflecting: error))")
        }
    }

    public func follow(_ changed: @escaping @Sendable (Username) -> Void) async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        for try await notification in notifications {
                            if let user = Username(validating: notification.payload) { changed(user) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("lost the notices of changed archives; listening again: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: reconnectDelay)
        }
    }
}
