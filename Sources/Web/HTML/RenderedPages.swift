import Foundation
import HTTPServing
import Hummingbird
import Synchronization
import Sync
import VinylogueCore

/// Recently rendered pages (and the JSON API's answers), kept in memory for
/// a short time so a popular page costs a dictionary lookup instead of a
/// render.
///
/// Only complete answers are kept: never an error, never one built from a
/// stale copy or missing a part Last.fm could not give for the moment.
/// Entries live `lifetime` (60 s by default), which bounds how far "N years
/// ago" can drift; the settings a page was made with are part of its key.
/// The cache is bounded by entries and by bytes, so no stream of distinct
/// requests can grow memory past `maxBytes`.
final class RenderedPages: Sendable {
    struct Entry: Sendable {
        let status: HTTPResponse.Status
        let body: ByteBuffer
        let expires: Date
        let contentType: String
        /// The answer's `ETag` (complete pages only).
        var etag: String? = nil
        /// The headers it is sent with, made once when it is kept (the
        /// security headers too): a warm answer builds none.
        let headers: HTTPFields

        /// - Parameter own: headers of the route's own that the answer is
        ///   sent with (the widget page's framing policy); the security
        ///   headers it lacks are added as the middleware adds them.
        init(status: HTTPResponse.Status, body: ByteBuffer, expires: Date, contentType: String, etag: String? = nil, own: HTTPFields = [:]) {
            self.status = status
            self.body = body
            self.expires = expires
            self.contentType = contentType
            self.etag = etag
            var headers = WholeAnswer.headers(contentType, etag: etag)
            headers.append(contentsOf: own)
            headers.append(contentsOf: SecurityHeaderFields.missing(in: headers))
            self.headers = headers
        }
    }

    /// The content types of what is kept.
    static let html = WholeAnswer.html
    static let json = WholeAnswer.json

    private struct Kept {
        var entries: [String: Entry] = [:]
        var bytes = 0
        /// The keys by each field they hold (lowercased): which answers
        /// name a user, found without reading every key (a listen received
        /// asks, and the cache holds thousands).
        var byField: [Substring: Set<String>] = [:]
        /// Addresses of kept answers, for `KeptPageShortcut`: a request
        /// asked exactly as an earlier one finds its answer without the
        /// router. At most twice the entries' capacity (then they start
        /// over); one whose answer has gone leads nowhere and is passed by.
        var aliases: [Address: Alias] = [:]
        /// Lookups that found a live entry, and those that did not (absent
        /// or expired), since start: `/healthz` reports them.
        var hits = 0
        var misses = 0

        mutating func insert(_ key: String, _ entry: Entry) {
            if let old = entries.updateValue(entry, forKey: key) {
                bytes -= old.body.readableBytes
            } else {
                for field in RenderedPages.fields(of: key) { byField[field, default: []].insert(key) }
            }
            bytes += entry.body.readableBytes
        }

        mutating func remove(_ key: String) {
            guard let entry = entries.removeValue(forKey: key) else { return }
            bytes -= entry.body.readableBytes
            for field in RenderedPages.fields(of: key) {
                byField[field]?.remove(key)
                if byField[field]?.isEmpty == true { byField[field] = nil }
            }
        }

        /// Forgets every entry (the counts stay: they are since start).
        mutating func empty() {
            entries = [:]
            bytes = 0
            byField = [:]
        }

        /// Keeps only the entries `keep` says to, rebuilding the index.
        mutating func filter(_ keep: (Entry) -> Bool) {
            entries = entries.filter { keep($0.value) }
            bytes = entries.values.reduce(0) { $0 + $1.body.readableBytes }
            byField = [:]
            for key in entries.keys {
                for field in RenderedPages.fields(of: key) { byField[field, default: []].insert(key) }
            }
        }
    }

    private let kept = Mutex(Kept())

    /// An address a kept answer was asked by, exactly as written (path and
    /// query), with the settings it was made for.
    struct Address: Hashable, Sendable {
        let target: String
        let settings: String
    }

    /// What a known address is: the answer's key, whose it is, the route
    /// (for the request metrics), and whether its page shows "now playing".
    struct Alias: Sendable {
        let key: String
        let user: Username
        let route: String
        let showsNowPlaying: Bool
    }


    private let clock: WallClock
    private let lifetime: TimeInterval
    private let capacity: Int
    private let maxBytes: Int

    init(clock: WallClock, lifetime: TimeInterval = 60, capacity: Int = 2000, maxBytes: Int = 32 << 20) {
        self.clock = clock
        self.lifetime = lifetime
        self.capacity = capacity
        self.maxBytes = maxBytes
    }

    /// Lookups answered from what is kept, and lookups that were not.
    struct Counts: Encodable, Sendable {
        let hits: Int
        let misses: Int
    }

    /// How often a page was found here since start.
    var counts: Counts { kept.withLock { Counts(hits: $0.hits, misses: $0.misses) } }

    /// How many bytes of pages are kept now.
    var keptBytes: Int { kept.withLock { $0.bytes } }

    /// These kept answers as a request whose answer conceals
    /// `concealment`'s people may use them: not at all when it conceals
    /// anyone (what is kept was made for viewers who may see everyone in
    /// it, and what is made for a request that conceals someone is kept
    /// for nobody). Routes reach what is kept only through this.
    func unlessConcealing(_ concealment: Concealment) -> RenderedPages? {
        concealment.concealsAnyone ? nil : self
    }

    /// The kept answer for `key`.
    func page(_ key: String) -> Entry? {
        let now = clock.now
        return kept.withLock { kept in
            guard let entry = kept.entries[key] else {
                kept.misses += 1
                return nil
            }
            if entry.expires <= now {
                kept.remove(key)
                kept.misses += 1
                return nil
            }
            kept.hits += 1
            return entry
        }
    }

    /// The kept answer for `key` as a response to `request`, when there is
    /// one: 304 Not Modified, with no body, when the browser holds it
    /// already (its `If-None-Match` names the answer's `ETag`).
    func response(_ key: String, to request: Request) -> Response? {
        page(key).map { Self.response($0, to: request) }
    }

    /// `entry` as a response: the same headers as when it was first sent.
    static func response(_ entry: Entry) -> Response {
        Response(status: entry.status, headers: entry.headers, body: .init(byteBuffer: entry.body))
    }

    /// Whether `request`'s `If-None-Match` names `etag` (or is `*`).
    static func holds(_ request: Request, _ etag: String) -> Bool {
        for value in request.headers[values: .ifNoneMatch] {
            for tag in value.split(separator: ",") {
                let tag = tag.trimmingCharacters(in: .whitespaces)
                if tag == "*" || tag == etag || tag == "W/" + etag { return true }
            }
        }
        return false
    }

    /// Keeps an answer for `key`; `etag` is the one it was sent with
    /// (`response(status:body:contentType:)` makes it), so a kept answer
    /// is hashed once, and a kept card, never sent by this type, not at all.
    /// `own` are headers of the route's own it is sent with again (a
    /// framing policy).
    func keep(_ key: String, status: HTTPResponse.Status, body: ByteBuffer, contentType: String = RenderedPages.html, etag: String? = nil,
              own: HTTPFields = [:]) {
        let expires = clock.now.addingTimeInterval(lifetime)
        guard body.readableBytes <= maxBytes / 4 else { return }
        let now = clock.now
        kept.withLock { kept in
            if kept.entries.count >= capacity || kept.bytes + body.readableBytes > maxBytes {
                // Drop the expired ones; if that is not enough, start over.
                kept.filter { $0.expires > now }
                if kept.entries.count >= capacity || kept.bytes + body.readableBytes > maxBytes {
                    kept.empty()
                }
            }
            kept.insert(key, Entry(status: status, body: body, expires: expires, contentType: contentType, etag: etag, own: own))
        }
    }

    /// Forgets everything kept that names `user`, after listens were added
    /// to their archive: a kept page, card or JSON answer would show them
    /// missing. Keys are fields joined by "|" (lists by ","), one of them
    /// the user's name (`chart|name|…`, `card|history|name|…`, …); a key
    /// that only happens to hold the same word is dropped too, which costs
    /// one render.
    func removePages(of user: Username) {
        kept.withLock { kept in
            for key in kept.byField[Substring(user.key)] ?? [] { kept.remove(key) }
        }
    }

    /// A key's fields, lowercased: "|" separates them, "," a list's names.
    static func fields(of key: String) -> Set<Substring> {
        Set(key.lowercased()[...].split(whereSeparator: { $0 == "|" || $0 == "," }))
    }

    func removeAll() {
        kept.withLock { kept in
            kept.empty()
            kept.aliases = [:]
        }
    }

    /// Notes that `target` with `settings` is answered by the kept `key`.
    func remember(_ target: String, settings: String, as key: String, user: Username, route: String, showsNowPlaying: Bool) {
        let capacity = self.capacity * 2
        kept.withLock { kept in
            if kept.aliases.count >= capacity { kept.aliases.removeAll(keepingCapacity: true) }
            kept.aliases[Address(target: target, settings: settings)] = Alias(key: key, user: user, route: route, showsNowPlaying: showsNowPlaying)
        }
    }

    /// What `target` asked with `settings` was last answered by, and that
    /// answer while it is kept and fresh: one lock for both.
    func aliased(_ target: String, settings: String) -> (alias: Alias, entry: Entry)? {
        let now = clock.now
        return kept.withLock { kept in
            guard let alias = kept.aliases[Address(target: target, settings: settings)], let entry = kept.entries[alias.key],
                  entry.expires > now else { return nil }
            kept.hits += 1
            return (alias, entry)
        }
    }

    /// `entry` as the answer to `request`: 304 when the browser holds it.
    static func response(_ entry: Entry, to request: Request) -> Response {
        if entry.status == .ok, let etag = entry.etag, holds(request, etag) {
            return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: "no-cache"])
        }
        return response(entry)
    }
}
