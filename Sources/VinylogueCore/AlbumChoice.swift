import Foundation

/// One choice a person made about one album, on top of the edition rule
/// (`AlbumFolding`): a spelling kept apart as an album of its own ("Keep
/// apart"), or an album joined to another the rule did not join ("Same
/// album as…"). Choices are the person's (keyed by their name), undone
/// one by one, carried by their export and erased with their account.
public struct AlbumChoice: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A spelling that is an album of its own.
        case apart
        /// An album that is the same album as another.
        case join
    }

    public let kind: Kind
    /// `.apart`: the spelling's key (`AlbumFolding.spellingKey`); `.join`:
    /// the joined album's key before the join.
    public let key: String
    /// `.join`: the key of the album it joins.
    public let target: String?
    /// The spelling kept apart, or the album joined, as the person saw it.
    public let artist: String
    public let album: String
    /// `.join`: the album it joins, as the person named it.
    public let targetArtist: String?
    public let targetAlbum: String?
    public let madeAt: Date

    public init(kind: Kind, key: String, target: String?, artist: String, album: String, targetArtist: String?, targetAlbum: String?,
                madeAt: Date) {
        self.kind = kind
        self.key = key
        self.target = target
        self.artist = artist
        self.album = album
        self.targetArtist = targetArtist
        self.targetAlbum = targetAlbum
        self.madeAt = madeAt
    }

    /// The choice pointed at another album, as made `now` (an export
    /// replays choices in the order they were made: it must come after
    /// what its new target needs).
    func pointing(to target: String, artist targetArtist: String?, album targetAlbum: String?, at now: Date) -> AlbumChoice {
        AlbumChoice(kind: kind, key: key, target: target, artist: artist, album: album, targetArtist: targetArtist,
                    targetAlbum: targetAlbum, madeAt: now)
    }
}

/// A change a person asks for (`AlbumChoice`).
public enum AlbumChoiceChange: Sendable, Hashable {
    /// The spelling `artist` / `album` counts as an album of its own.
    case keepApart(artist: String, album: String)
    /// The album `artist` / `album` is the same album as `toArtist` / `toAlbum`.
    case join(artist: String, album: String, toArtist: String, toAlbum: String)
    /// The choice of `kind` and `key` is undone.
    case undo(AlbumChoice.Kind, key: String)
}

extension AlbumChoiceChange {
    /// `choices` (a person's, in the order they were made) after this
    /// change made at `now`, and the album keys whose weeks must be counted
    /// again (as the charts keep them now); nil when it changes nothing
    /// (a spelling already apart, an album already joined, a choice that
    /// is not there). `sameRelease` is the person's albums tied by release
    /// (`AlbumFolding.sameRelease`), which the keys are taken after.
    public func applied(to choices: [AlbumChoice], sameRelease: [String: String] = [:],
                        at now: Date) -> (choices: [AlbumChoice], touched: Set<String>)? {
        let before = AlbumFolding(foldsEditions: true, choices: choices, sameRelease: sameRelease)
        switch self {
        case .keepApart(let artist, let album):
            guard !album.isEmpty else { return nil }
            let spelled = AlbumFolding.spellingKey(artist: artist, album: album)
            guard !before.keptApart.contains(spelled) else { return nil }
            let touched = before.folded(.album, artist: artist, name: album).key
            return (choices + [AlbumChoice(kind: .apart, key: spelled, target: nil, artist: artist, album: album, targetArtist: nil,
                                           targetAlbum: nil, madeAt: now)], [touched])
        case .join(let artist, let album, let toArtist, let toAlbum):
            guard !album.isEmpty, !toAlbum.isEmpty else { return nil }
            // The spelling's own album (joins stay with it whatever
            // releases later tie or untie), and its group's.
            let source = before.ungrouped(artist: artist, album: album).key
            let grouped = before.unjoined(artist: artist, album: album).key
            let current = before.folded(.album, artist: artist, name: album).key
            let target = before.folded(.album, artist: toArtist, name: toAlbum).key
            guard source != target, grouped != target, current != target else { return nil }
            // Named as the album it reaches: a join to a joined album is a
            // join to that album's target.
            var names = (artist: toArtist, album: toAlbum)
            let reached = before.unjoined(artist: toArtist, album: toAlbum).key
            let reachedOwn = before.ungrouped(artist: toArtist, album: toAlbum).key
            if reached != target, let via = choices.first(where: { $0.kind == .join && ($0.key == reached || $0.key == reachedOwn) }),
               let viaArtist = via.targetArtist, let viaAlbum = via.targetAlbum {
                names = (viaArtist, viaAlbum)
            }
            // One level: what joined this album now joins its target.
            let kept = choices.filter { !($0.kind == .join && $0.key == source) }.map { choice in
                choice.kind == .join && (choice.target == source || choice.target == grouped)
                    ? choice.pointing(to: target, artist: names.artist, album: names.album, at: now) : choice
            }
            return (kept + [AlbumChoice(kind: .join, key: source, target: target, artist: artist, album: album, targetArtist: names.artist,
                                        targetAlbum: names.album, madeAt: now)], [current])
        case .undo(let kind, let key):
            guard let found = choices.first(where: { $0.kind == kind && $0.key == key }) else { return nil }
            let rest = choices.filter { $0 != found }
            switch kind {
            case .join:
                // The joined album's rows are kept where the join (and any
                // release tying its target) counts them now.
                let counted = before.folded(.album, artist: found.artist, name: found.album).key
                return (rest, Set([found.target ?? found.key, counted]))
            case .apart:
                // The spelling goes back to its album; what was joined to
                // it (or it to) follows the album.
                let own = AlbumFolding.apartPrefix + key
                let touched = before.joined[own] ?? own
                let unkept = rest.filter { !($0.kind == .join && $0.key == own) }
                // Its album, without the joins to the spelling itself (they follow it).
                let album = AlbumFolding(foldsEditions: true, choices: unkept.filter { !($0.kind == .join && $0.target == own) },
                                         sameRelease: sameRelease)
                    .folded(.album, artist: found.artist, name: found.album)
                let pointed = unkept.compactMap { choice -> AlbumChoice? in
                    guard choice.kind == .join, choice.target == own else { return choice }
                    return choice.key == album.key ? nil : choice.pointing(to: album.key, artist: found.artist, album: found.album, at: now)
                }
                return (pointed, [touched])
            }
        }
    }
}
