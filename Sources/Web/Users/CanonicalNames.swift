import Sync
import Stores
import Foundation
import Hummingbird
import Synchronization
import VinylogueCore

/// Last.fm's spelling of each username the server has resolved, so that
/// `/u/RJ` and `/u/rj` are one page with one address and one cache entry.
///
/// Names come from the person's list, the demo, the archive (as imported or
/// synced), or `user.getinfo` (whose
/// answer the response cache keeps for a day). Only successful lookups are
/// remembered; the memo is bounded and starts over when full.
final class CanonicalNames: Sendable {
    private struct Memo {
        var names: [String: Username] = [:]
        /// The spellings in `names`, for the common case of a request that
        /// already uses Last.fm's spelling (one set lookup, no parsing).
        var spellings: Set<String> = []
        /// Names whose lookup failed, until when not to ask again.
        var failures: [String: Date] = [:]
    }

    private let memo = Mutex(Memo())
    private let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func remembered(_ user: Username) -> Username? {
        memo.withLock { $0.names[user.key] }
    }

    /// Whether `raw` is a spelling already known to be Last.fm's.
    func isCanonical(_ raw: Substring) -> Bool {
        memo.withLock { $0.spellings.contains(String(raw)) }
    }

    /// Whether a lookup of `user` failed recently enough not to repeat it.
    func failedRecently(_ user: Username, at now: Date) -> Bool {
        memo.withLock { memo in
            guard let until = memo.failures[user.key] else { return false }
            if until <= now { memo.failures[user.key] = nil }
            return until > now
        }
    }

    func rememberFailure(_ user: Username, until: Date) {
        memo.withLock { memo in
            if memo.failures.count >= capacity { memo.failures.removeAll(keepingCapacity: true) }
            memo.failures[user.key] = until
        }
    }

    func remember(_ name: Username) {
        memo.withLock { memo in
            if memo.names.count >= capacity {
                memo.names.removeAll(keepingCapacity: true)
                memo.spellings.removeAll(keepingCapacity: true)
            }
            if let old = memo.names[name.key] { memo.spellings.remove(old.value) }
            memo.names[name.key] = name
            memo.spellings.insert(name.value)
        }
    }
}

/// Last.fm's spelling of a name, found in what this server knows first:
/// the demo, the household's list, the archive; else asked of Last.fm (or
/// ListenBrainz), briefly.
struct CanonicalNameLookup: Sendable {
    let names: CanonicalNames
    let sources: ListeningSources
    /// The household's list.
    let lists: any ListStore
    let archive: any ScrobbleArchive
    let background: BackgroundWork
    /// How long a page waits for Last.fm's answer (`Patience.nameLookup`).
    let patience: Duration
    let clock: WallClock

    /// `user` as Last.fm spells it, or nil when that cannot be learned now
    /// (an unknown user, or Last.fm unreachable with nothing cached).
    func canonicalName(of user: Username) async -> Username? {
        if let known = names.remembered(user) { return known }
        if names.failedRecently(user, at: clock.now) { return nil }
        var found: Username?
        if let name = sources.demoName(of: user) {
            found = name
        } else if let listed = try? await lists.user(user), let name = Username(validating: listed.name) {
            found = name
        } else if let stored = try? await archive.storedName(of: user) {
            // Archived users are served offline: no Last.fm for them.
            found = stored
        }
        if let found {
            names.remember(found)
            return found
        }
        return await askLastFM(for: user)
    }

    /// How long a failed lookup (unknown user, Last.fm down) is not repeated.
    static let canonicalLookupRetryAfter: TimeInterval = 300

    /// `user.getinfo`, waited for at most `patience.nameLookup`, so a
    /// slow or unreachable Last.fm never holds a page up twice (here and
    /// again when the page loads its chart).
    private func askLastFM(for user: Username) async -> Username? {
        let names = self.names, clock = self.clock, profiles = sources.profiles(for: user)
        let lookup = await background.start { () -> Username? in
            do {
                let name = try await profiles.user(user).name
                names.remember(name)
                return name
            } catch {
                names.rememberFailure(user, until: clock.now.addingTimeInterval(Self.canonicalLookupRetryAfter))
                return nil
            }
        }
        // Nil when the wait ran out, the job was cancelled, or Last.fm said no.
        guard let answer = await lookup.value(within: patience), let found = answer else { return nil }
        return found
    }
}
