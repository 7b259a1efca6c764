import VinylogueCore

/// Tells every instance of a fleet that a person's archive changed (they
/// sent listens to one of them), so each drops the pages it kept of that
/// person and the next visit anywhere is made with the new listens. A
/// single server (SQLite) has none: it drops its own pages as it keeps the
/// listens.
public protocol ArchiveChangeNotices: Sendable {
    /// Says that `user`'s archive changed; a failure is only logged (the
    /// others' pages then last until they expire).
    func announce(_ user: Username) async
    /// Calls `changed` with each user another instance (or this one)
    /// announced, until the task is cancelled; a lost connection is made
    /// again.
    func follow(_ changed: @escaping @Sendable (Username) -> Void) async
}
