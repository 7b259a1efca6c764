/// Albums a person's listens tie together by MusicBrainz release, where
/// the edition rule (`AlbumIdentity`) cannot: a translated title and its
/// original ("Le Fabuleux Destin…" / "Amélie"), a renamed reissue ("OK
/// Computer OKNOTOK 1997 2017"). Two album keys whose listens carry the
/// same release MBID are one album, and so is everything tied to either
/// (a union over the person's ties). Different MBIDs never split what the
/// rule joins: they are usually two releases of one album.
///
/// The ties are derived from stored listens (`Tie`, kept by the archive's
/// write and recounted from the scrobbles); `groups` turns them into the
/// map `AlbumFolding.sameRelease` applies.
public enum AlbumReleases {
    /// One release MBID seen on the listens of one album (its rule key,
    /// `AlbumIdentity.key`).
    public struct Tie: Sendable, Hashable {
        public let mbid: String
        public let key: String

        public init(mbid: String, key: String) {
            self.mbid = mbid
            self.key = key
        }
    }

    /// A listen's album as it names a release: its release (or release
    /// group) MBID and its names, as stored (the archive keeps one row per
    /// spelling and release, so only a spelling not seen before is keyed
    /// by the rule). MusicBrainz ids are random UUIDs, so a release's and a
    /// release group's never meet by chance: both tie the same way.
    public struct Release: Sendable, Hashable {
        /// Lower case, a UUID.
        public let mbid: String
        public let artist: String
        public let album: String

        /// Nil for a listen without an album or without a well-formed
        /// release MBID (a UUID other than the nil UUID; anything else ties
        /// nothing).
        public init?(mbid: String, artist: String, album: String) {
            guard !album.isEmpty, let id = AlbumReleases.uuid(mbid) else { return nil }
            self.mbid = id
            self.artist = artist
            self.album = album
        }

        public init?(_ scrobble: Scrobble) {
            guard let mbid = scrobble.albumMBID else { return nil }
            self.init(mbid: mbid, artist: scrobble.artistOfAlbum, album: scrobble.album)
        }

        /// Every release a listen names: its release and its release group.
        public static func all(_ scrobble: Scrobble) -> [Release] {
            [scrobble.albumMBID, scrobble.releaseGroupMBID].compactMap { id in
                id.flatMap { Release(mbid: $0, artist: scrobble.artistOfAlbum, album: scrobble.album) }
            }
        }

        /// The tie it makes.
        public var tie: Tie { Tie(mbid: mbid, key: AlbumIdentity.key(artist: artist, album: album) ?? "") }
    }

    /// `text` as a lower-case UUID, or nil when it is not one (or is the
    /// nil UUID, which some players send for "none").
    public static func uuid(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 36, text != "00000000-0000-0000-0000-000000000000" else { return nil }
        var lower = [UInt8]()
        lower.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                lower.append(byte)
            } else {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): lower.append(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): lower.append(byte + 32)
                default: return nil
                }
            }
        }
        return String(decoding: lower, as: UTF8.self)
    }

    /// The most titles one release id may carry and still tie: a real
    /// release is played under a few (an edition, a translation, a
    /// reissue's name; a compilation's tracks under its one title by many
    /// artists). An id on more is a tagger's mistake (one id written on a
    /// whole library), and ties nothing.
    public static let titlesPerRelease = 4

    /// The groups `ties` make: every key of a group of two or more keys,
    /// to the group's key (its smallest, so the same ties give the same
    /// map whatever their order). A release id on more than
    /// `titlesPerRelease` titles is left out.
    public static func groups(_ ties: some Sequence<Tie>) -> [String: String] {
        let ties = Array(ties)
        var titles: [String: Set<Substring>] = [:]
        for tie in ties { titles[tie.mbid, default: []].insert(title(ofKey: tie.key)) }
        var parent: [String: String] = [:]
        func root(_ key: String) -> String {
            var at = key
            while let up = parent[at], up != at { at = up }
            // Path compression: everything on the way points at the root.
            var walk = key
            while let up = parent[walk], up != at { parent[walk] = at; walk = up }
            return at
        }
        var firstKey: [String: String] = [:]
        for tie in ties where titles[tie.mbid, default: []].count <= titlesPerRelease {
            if parent[tie.key] == nil { parent[tie.key] = tie.key }
            guard let other = firstKey[tie.mbid] else { firstKey[tie.mbid] = tie.key; continue }
            let a = root(other), b = root(tie.key)
            guard a != b else { continue }
            // The smaller key is the root: a group's key is its smallest.
            if a < b { parent[b] = a } else { parent[a] = b }
        }
        var groups: [String: String] = [:]
        var sizes: [String: Int] = [:]
        for key in parent.keys { sizes[root(key), default: 0] += 1 }
        for key in parent.keys {
            let top = root(key)
            if sizes[top, default: 0] > 1 { groups[key] = top }
        }
        return groups
    }

    /// The title part of an album key (after the artist).
    static func title(ofKey key: String) -> Substring {
        key.firstIndex(of: "\u{1F}").map { key[key.index(after: $0)...] } ?? key[...]
    }

    /// The person's groups once the ties of some groups are `component`:
    /// every tie of every release reachable from a write's new ties
    /// through shared keys, releases on too many titles included (a new
    /// title can take a release over `titlesPerRelease` and split what it
    /// tied). Groups outside it are as `before` has them: a new tie
    /// changes only the groups it reaches, so this is what `groups` of all
    /// the ties gives.
    public static func regrouped(_ before: [String: String], component: some Sequence<Tie>) -> [String: String] {
        let component = Array(component)
        let reached = Set(component.map(\.key))
        var after = before.filter { !reached.contains($0.key) }
        after.merge(keeping(before, groups(component))) { _, new in new }
        return after
    }

    /// `groups` named as `before` named them where it can: a group that
    /// holds a key some group had as its key keeps that key (the key of
    /// the largest such group, the smallest key on a tie), so a group that
    /// gains a member keeps its name and its weeks are not all counted
    /// again; only a group with no kept key takes its smallest. The groups
    /// themselves (which keys go together) are what `groups` gives.
    public static func keeping(_ before: [String: String], _ groups: [String: String]) -> [String: String] {
        guard !before.isEmpty else { return groups }
        var sizes: [String: Int] = [:]
        for group in before.values { sizes[group, default: 0] += 1 }
        var members: [String: [String]] = [:]
        for (key, group) in groups { members[group, default: []].append(key) }
        var named: [String: String] = [:]
        for (smallest, keys) in members {
            let kept = keys.filter { before[$0] == $0 }.max { a, b in
                sizes[a, default: 0] != sizes[b, default: 0] ? sizes[a, default: 0] < sizes[b, default: 0] : a > b
            }
            for key in keys { named[key] = kept ?? smallest }
        }
        return named
    }

    /// What turns the kept groups `before` into `after`: the keys to
    /// delete, and the rows to write (a key and its group's key).
    public static func changes(from before: [String: String], to after: [String: String]) -> (gone: [String], set: [(key: String, group: String)]) {
        let gone = before.keys.filter { after[$0] == nil }.sorted()
        let set = after.filter { before[$0.key] != $0.value }.map { (key: $0.key, group: $0.value) }.sorted { $0.key < $1.key }
        return (gone, set)
    }

    /// The album keys whose weekly charts change when the person's groups
    /// become `after` (`folding` holds the groups before): every album
    /// key of a grouped or joined album that counts elsewhere after, as
    /// the kept charts hold it now and as it will count.
    public static func touched(to after: [String: String], folding: AlbumFolding) -> Set<String> {
        let regrouped = folding.withSameRelease(after)
        var touched = Set<String>()
        for key in Set(folding.sameRelease.keys).union(after.keys).union(folding.joinedKeys).union(regrouped.joinedKeys) {
            let now = folding.albumKey(ofRuleKey: key), then = regrouped.albumKey(ofRuleKey: key)
            if now != then { touched.insert(now); touched.insert(then) }
        }
        return touched
    }
}
