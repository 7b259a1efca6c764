import Foundation
import Hummingbird
import Logging
import Stores
import Sync
import Synchronization
import VinylogueCore

/// Who may see whose listening, answered from memory on every request:
/// every account's `Visibility` as one `VisibilityRules`, read from the
/// database at start, and again after each change here (a choice saved,
/// a list changed, an account deleted) and each one another instance of
/// a fleet announces (`FleetNotice.audienceChanged`), or whenever the
/// fleet's notices are heard again after a lost connection (some may have
/// been missed).
///
/// A request for a person's page asks (`PersonMiddleware`) before anything
/// of theirs is read: with nobody restricted that is one atomic load; for
/// a restricted person it costs the viewer (the session's one lookup). A
/// person the viewer may not see is concealed (`Concealment`, handed to
/// what answers for the request), which then answers exactly as for a
/// name Last.fm does not know.
public final class Audiences: Sendable {
    private let rules: Mutex<Installed>
    /// Whether anyone is restricted: the fast path of every request.
    private let anyRestricted: Atomic<Bool>
    let store: any VisibilityStore
    private let logger = Logger(label: "vinylogue.visibility")

    /// The rules in force, and the tickets that order the reads of them:
    /// every read (and every choice applied here) takes the next ticket
    /// before it starts, and its rules are installed only when no later
    /// one's were. A read that began before a newer choice and ended after
    /// it (a fleet notice's, racing `apply`) therefore never puts the old
    /// choice back.
    private struct Installed {
        var rules: VisibilityRules
        var issued: UInt64 = 0
        var installed: UInt64 = 0
    }

    /// Reads every account's choice; a database that cannot be read stops
    /// the start (the server never serves without knowing who is hidden).
    public init(store: any VisibilityStore) async throws {
        self.store = store
        let rules = VisibilityRules(try await store.restrictions())
        self.rules = Mutex(Installed(rules: rules))
        anyRestricted = Atomic(!rules.isEmpty)
    }

    /// The rules as they stand.
    public var current: VisibilityRules { rules.withLock { $0.rules } }

    /// The next ticket, taken before a read or a change begins.
    private func ticket() -> UInt64 {
        rules.withLock { state in
            state.issued += 1
            return state.issued
        }
    }

    /// Installs what the read or change holding `ticket` made of the rules,
    /// unless a later one has been installed already.
    private func install(_ ticket: UInt64, _ change: (VisibilityRules) -> VisibilityRules) {
        rules.withLock { state in
            guard ticket > state.installed else { return }
            state.installed = ticket
            state.rules = change(state.rules)
            anyRestricted.store(!state.rules.isEmpty, ordering: .releasing)
        }
    }

    /// Whether anyone is restricted at all.
    var restrictsAnyone: Bool { anyRestricted.load(ordering: .acquiring) }

    /// Reads the rules again. A failed read keeps the old ones and is
    /// thrown (the caller says so); the next change or notice reads again.
    public func reload() async throws {
        let ticket = ticket()
        let fresh = VisibilityRules(try await store.restrictions())
        install(ticket) { _ in fresh }
    }

    /// Applies `account`'s new choice here at once (a read that fails then
    /// cannot leave the old choice in force), then reads every rule again
    /// for its friends.
    func apply(_ visibility: Visibility, of account: Account) async {
        install(ticket()) { $0.applying(visibility, of: account) }
        await reloadLogged()
    }

    /// Reads the rules again after lists changed, when anyone is
    /// restricted (only their friends can have changed), and tells the
    /// other instances to.
    func listsChanged(notices: (any FleetNotices)?, user: Username) async {
        guard restrictsAnyone else { return }
        await reloadLogged()
        await notices?.announce(.audienceChanged(user: user.value))
    }

    /// Reads the rules again, logging a failure (for notices, which have
    /// no one to answer).
    func reloadLogged() async {
        do { try await reload() } catch {
            logger.error("could not read who may see whom again; the rules read before stay: \(String(reflecting: error))")
        }
    }

    /// Whether `viewer` may not see `user`.
    func conceals(_ user: Username, from viewer: @autoclosure () async -> Viewer) async -> Bool {
        await !concealed([user], from: await viewer()).isEmpty
    }

    /// Whether `user` restricts who sees them (their pages are then sent
    /// as private to the viewer, never to a shared cache).
    func isRestricted(_ user: Username) -> Bool {
        restrictsAnyone && rules.withLock { $0.rules.isRestricted(user) }
    }

    /// The name keys among `users` that `viewer` may not see (for the
    /// everyone page, one check for the whole list).
    func concealed(_ users: [Username], from viewer: @autoclosure () async -> Viewer) async -> Set<String> {
        guard restrictsAnyone else { return [] }
        let rules = current
        let restricted = users.filter(rules.isRestricted)
        guard !restricted.isEmpty else { return [] }
        let account: Account? = if case .account(let account) = await viewer() { account } else { nil }
        return Set(restricted.filter { !rules.allows(account, toSee: $0) }.map(\.key))
    }
}
