import Stores
import Foundation
import Logging
import PostgresNIO
import VinylogueCore

/// `FleetNotices` through PostgreSQL's `NOTIFY` and `LISTEN` on the channel
/// `vinylogue_fleet`, each notice as JSON in the payload: every instance on
/// the database hears each one (its own too). A notice is a hint, not
/// data: one missed while an instance reconnects costs at most a page kept
/// until it expires, or a "now playing" not shown there.
public struct PostgresFleetNotices: FleetNotices {
    let database: PostgresDatabase
    let logger: Logger
    /// How long to wait before listening again after the connection was lost.
    let reconnectDelay: Duration

    static let channel = "vinylogue_fleet"

    public init(_ database: PostgresDatabase, logger: Logger = Logger(label: "vinylogue.postgres"), reconnectDelay: Duration = .seconds(1)) {
        self.database = database
        self.logger = logger
        self.reconnectDelay = reconnectDelay
    }

    public func announce(_ notice: FleetNotice) async {
        do {
            try await database.client.query("SELECT pg_notify(\(Self.channel), \(try Self.payload(notice)))", logger: logger)
        } catch {
            logger.warning("could not tell the other instances: \(String(reflecting: error))")
        }
    }

    /// A notice as its payload: names are at most a few hundred bytes, far
    /// below NOTIFY's 8,000.
    static func payload(_ notice: FleetNotice) throws -> String {
        String(decoding: try JSONEncoder().encode(notice), as: UTF8.self)
    }

    /// Announces `notices` in the caller's transaction, with one statement:
    /// the instances hear them when it commits, and not if it fails.
    static func announce(_ notices: [FleetNotice], _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !notices.isEmpty else { return }
        let payloads = try notices.map(payload)
        try await connection.query("SELECT pg_notify(\(channel), p) FROM unnest(\(payloads)::text[]) AS n(p)", logger: logger)
    }

    public func follow(_ heard: @escaping @Sendable (FleetNotice) -> Void) async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        // Listening now: what was announced before is missed.
                        heard(.listeningAgain)
                        for try await notification in notifications {
                            if let notice = try? JSONDecoder().decode(FleetNotice.self, from: Data(notification.payload.utf8)) { heard(notice) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("lost the fleet's notices; listening again: \(String(reflecting: error))")
            }
            try? await Task.sleep(for: reconnectDelay)
        }
    }
}
