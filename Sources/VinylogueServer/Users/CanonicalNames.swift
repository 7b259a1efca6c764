import Foundation
import Hummingbird
import VinylogueCore

/// Last.fm's spelling of each username the server has resolved, so that
/// `/u/RJ` and `/u/rj` are one page with one address and one cache entry.
///
/// Names come from the person's list, the demo, the archive (as imported or
/// synced), or `user.getinfo` (whose
/// answer the response cache keeps for a day). Only successful lookups are
/// remembered; the memo is bounded and starts over when full.
final class CanonicalNames: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String: Username] = [:]
    /// The spellings in `names`, for the common case of a request that
    /// already uses Last.fm's spelling (one set lookup, no parsing).
    private var spellings: Set<String> = []
    private let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func remembered(_ user: Username) -> Username? {
        lock.withLock { names[user.key] }
    }

    /// Whether `raw` is a spelling already known to be Last.fm's.
    func isCanonical(_ raw: Substring) -> Bool {
        lock.withLock { spellings.contains(String(raw)) }
    }

    func remember(_ name: Username) {
        lock.withLock {
            if names.count >= capacity {
                names.removeAll(keepingCapacity: true)
                spellings.removeAll(keepingCapacity: true)
            }
            if let old = names[name.key] { spellings.remove(old.value) }
            names[name.key] = name
            spellings.insert(name.value)
        }
    }
}

extension ServerDependencies {
    /// `user` as Last.fm spells it, or nil when that cannot be learned now
    /// (an unknown user, or Last.fm unreachable with nothing cached).
    func canonicalName(of user: Username) async -> Username? {
        if let known = canonicalNames.remembered(user) { return known }
        var found: Username?
        if isDemo(user) {
            found = DemoHistory.username
        } else if let listed = try? await lists.user(user), let name = Username(validating: listed.name) {
            found = name
        } else if let archive, let stored = try? archive.storedName(of: user) {
            // Archived users are served offline: no Last.fm for them.
            found = stored
        } else if let profile = try? await profiles(for: user).user(user) {
            found = profile.name
        }
        if let found { canonicalNames.remember(found) }
        return found
    }
}

/// Sends `/u/{user}/…` addressed with another casing of a username to the
/// address with Last.fm's casing, keeping the rest of the path and the query.
/// Pages, their caches and shared links then have one address per user.
struct CanonicalUserPathMiddleware<Context: RequestContext>: RouterMiddleware {
    let dependencies: ServerDependencies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head,
              let (raw, rest) = Self.userSegment(of: request.uri.path),
              !dependencies.canonicalNames.isCanonical(raw),
              let user = Username(validating: String(raw)),
              let canonical = await dependencies.canonicalName(of: user),
              canonical.value != raw
        else { return try await next(request, context) }
        var location = "/u/\(canonical.value)\(rest)"
        if let query = request.uri.query, !query.isEmpty { location += "?\(query)" }
        return Response(status: .found, headers: [.location: location, .cacheControl: "no-cache"])
    }

    /// "/u/RJ/week/2020-07-08" → ("RJ", "/week/2020-07-08").
    static func userSegment(of path: String) -> (Substring, Substring)? {
        guard path.hasPrefix("/u/") else { return nil }
        let afterPrefix = path.dropFirst(3)
        let end = afterPrefix.firstIndex(of: "/") ?? afterPrefix.endIndex
        let segment = afterPrefix[..<end]
        guard !segment.isEmpty else { return nil }
        return (segment, afterPrefix[end...])
    }
}
