import Foundation

/// What makes two spellings one album: the rule, pure and person-free.
///
/// Streaming services rename an album at every reissue ("Abbey Road
/// (Remastered)", "Rumours - 2004 Remaster", "White Crosses [Limited
/// Edition]"), and a long history holds all of them. An album is its
/// artist without featured credits and its title without edition
/// decorations, both compared without regard to case, Unicode
/// normalisation (NFC / NFD), width, diacritics, quotes, dashes and
/// spacing (`comparable`).
///
/// A decoration is a part in parentheses, brackets or braces at the end of
/// the title, or after a spaced dash, whose every word belongs to an
/// edition ("remaster(ed)", "deluxe", "super", "expanded", "bonus track",
/// "special", "limited", "collector's", "anniversary", "reissue",
/// "explicit", "clean", "mono", "stereo", a year, an ordinal, "edition",
/// "version"…), "(2019 Mix)" and "(Stereo Mix)", "(Disc 2)", and "… Edition"
/// unless it names another recording ("Live Edition"). Parts joined by
/// "/", "&", "and", ";" or "," are decorations when each is. Decorations
/// stack and are removed from the end one at a time. Anything else stays:
/// "Led Zeppelin II", "Vol. 2", "(Live)", "(Remixes)", "Weezer (2008)",
/// "(Taylor's Version)", and a title that only contains such a word
/// without brackets ("Reissue Blues").
public enum AlbumIdentity {
    /// The grouping key of an album: its comparable main artist and title,
    /// joined by U+001F; nil for a listen without an album.
    public static func key(artist: String, album: String) -> String? {
        album.isEmpty ? nil : self.artist(artist) + "\u{1F}" + title(album)
    }

    /// `artist` compared as albums compare it: `comparable`, without
    /// featured credits ("feat.", "ft.", "featuring", "with"), so that a
    /// track's credits do not split its album. Duos and bands keep their
    /// names ("Simon & Garfunkel").
    public static func artist(_ artist: String) -> String {
        let text = comparable(artist)
        let bytes = Array(text.utf8)
        var cut = bytes.count
        for marker in featuredMarkers {
            if let found = firstOffset(of: marker, in: bytes, before: cut), found > 0 { cut = found }
        }
        guard cut != bytes.count else { return text }
        let main = trimmingSeparators(String(decoding: bytes[..<cut], as: UTF8.self)[...])
        return main.isEmpty ? text : main
    }

    static let deluxeColon = Array(" deluxe: ".utf8)

    /// Where `marker` first starts in `bytes`, if it starts before `limit`.
    static func firstOffset(of marker: [UInt8], in bytes: [UInt8], before limit: Int) -> Int? {
        guard let first = marker.first, bytes.count >= marker.count else { return nil }
        var i = 0
        while i < limit, i + marker.count <= bytes.count {
            if bytes[i] == first && bytes[i..<(i + marker.count)].elementsEqual(marker) { return i }
            i += 1
        }
        return nil
    }

    /// `title` compared as albums compare it: `comparable`, without its
    /// edition decorations. A title that is nothing but a decoration keeps
    /// it ("(Deluxe Edition)" alone is a name).
    public static func title(_ title: String) -> String {
        var text = comparable(title)
        // A single's or an EP's own editions: "Trains (Remastered) - Single".
        var kind = ""
        for suffix in [" - single", " - ep"] where text.utf8.count > suffix.utf8.count && text.utf8.reversed().starts(with: suffix.utf8.reversed()) {
            kind = suffix
            text = String(decoding: text.utf8.dropLast(suffix.utf8.count), as: UTF8.self)
        }
        while let shorter = withoutLastDecoration(text) { text = shorter }
        // An edition with a name of its own after "Deluxe:" ("SOS Deluxe: LANA").
        if kind.isEmpty, let deluxe = firstOffset(of: deluxeColon, in: Array(text.utf8), before: text.utf8.count), deluxe > 0 {
            text = trimmingSeparators(String(decoding: text.utf8.prefix(deluxe), as: UTF8.self)[...])
            while let shorter = withoutLastDecoration(text) { text = shorter }
        }
        return text + kind
    }

    /// `text` folded for comparison: compatibility-decomposed (so width
    /// and ligatures fold), diacritics dropped, lowercased, quotes removed,
    /// every dash a "-", every run of spacing one space, trimmed.
    /// Letters that do not decompose fold by hand (æ → ae, ø → o, ß → ss).
    public static func comparable(_ text: String) -> String {
        if let ascii = comparableASCII(text) { return ascii }
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.decomposedStringWithCompatibilityMapping.lowercased().unicodeScalars {
            if isCombiningMark(scalar) || isQuote(scalar) { continue }
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(" "); pendingSpace = false }
            if isDash(scalar) {
                out.append("-")
            } else if let spelled = lettersSpelledOut[scalar] {
                out.append(contentsOf: spelled.unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    // MARK: - Decorations

    /// `text` (comparable) without its last decoration, or nil when it
    /// ends in none.
    static func withoutLastDecoration(_ text: String) -> String? {
        guard let last = text.utf8.last else { return nil }
        if let open = closing[last] {
            let utf8 = Array(text.utf8)
            // The bracket that opens the last part (nesting counted).
            var depth = 0
            var i = utf8.count - 1
            while i >= 0 {
                if utf8[i] == last { depth += 1 } else if utf8[i] == open { depth -= 1 }
                if depth == 0 { break }
                i -= 1
            }
            guard i > 0 else { return nil }
            let inside = String(decoding: utf8[(i + 1)..<(utf8.count - 1)], as: UTF8.self)
            let before = trimmingSeparators(String(decoding: utf8[..<i], as: UTF8.self)[...])
            guard !before.isEmpty else { return nil }
            if isDecoration(inside) { return before }
            // "(Original Motion Picture Soundtrack / Deluxe Edition)": the
            // edition's parts go, the rest of the bracket stays.
            let parts = inside.split(separator: "/").map { $0.trimmingCharacters(in: .whitespaces) }
            let kept = parts.filter { !isDecoration($0) }
            guard parts.count > 1, !kept.isEmpty, kept.count < parts.count else { return nil }
            return before + " " + String(UnicodeScalar(open)) + kept.joined(separator: " / ") + String(UnicodeScalar(last))
        }
        // After the last spaced dash.
        if let dash = lastSpacedDash(in: text) {
            var before = trimmingSeparators(text[..<dash.lowerBound])
            if !before.isEmpty && isDecoration(String(text[dash.upperBound...])) {
                // "X - 2011 - Remaster": the remaster's year goes with it.
                if let year = lastSpacedDash(in: before), isYear(String(before[year.upperBound...])), !before.contains("live") {
                    let shorter = trimmingSeparators(before[..<year.lowerBound])
                    if !shorter.isEmpty { before = shorter }
                }
                return before
            }
        }
        guard endsWith(text, "edition") || endsWith(text, "anniversary") else { return nil }
        return withoutTrailingEdition(text)
    }

    /// Whether `text` ends in the ASCII `suffix` (bytes compared).
    static func endsWith(_ text: String, _ suffix: StaticString) -> Bool {
        let tail = UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount)
        return text.utf8.count >= tail.count && text.utf8.reversed().starts(with: tail.reversed())
    }

    /// Where the last " - " of `text` is (a scan of its bytes).
    static func lastSpacedDash(in text: String) -> Range<String.Index>? {
        let utf8 = text.utf8
        var i = utf8.endIndex
        var matched = 0
        while i > utf8.startIndex {
            i = utf8.index(before: i)
            let expected: UInt8 = matched == 1 ? 0x2D : 0x20
            if utf8[i] == expected {
                matched += 1
                if matched == 3 { return i..<utf8.index(i, offsetBy: 3) }
            } else {
                matched = utf8[i] == 0x20 ? 1 : 0
            }
        }
        return nil
    }

    /// `text` without an unbracketed "… Anniversary Edition" or "… Deluxe
    /// Edition" at its end ("Joyride 30th Anniversary Edition"): the words
    /// from the end that are all edition words, ending in "edition" or
    /// "anniversary" and naming which edition. Nil when there is none, or
    /// when nothing would be left ("Limited Edition" is a name).
    static func withoutTrailingEdition(_ text: String) -> String? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let last = words.last, last == "edition" || last == "anniversary" else { return nil }
        var start = words.count
        var named = false
        while start > 0 {
            let word = words[start - 1].trimmingCharacters(in: wordEdges)
            if editionMarks.contains(word) {
                named = true
            } else if !(isOrdinal(word) || isYear(word) || trailingWords.contains(word)) {
                break
            }
            start -= 1
        }
        guard named, start > 0 else { return nil }
        // "Happy Anniversary" is a name; "45th Anniversary" an edition.
        let run = words[start...].map(String.init)
        if last == "anniversary", !run.contains(where: { isOrdinal($0) || isYear($0) || spelledOrdinals.contains($0) }),
           run.filter(editionMarks.contains).count < 2 {
            return nil
        }
        let before = trimmingSeparators(words[..<start].joined(separator: " ")[...])
        return before.isEmpty ? nil : before
    }

    /// Words an unbracketed edition at the end of a title may hold beside
    /// its marks (fewer than a bracketed one: "Live in Japan Deluxe
    /// Edition" keeps "Live in Japan").
    static let trailingWords: Set<String> = spelledOrdinals.union(["edition", "the"])

    static let spelledOrdinals: Set<String> = [
        "first", "second", "third", "fifth", "tenth", "fifteenth", "twentieth", "twenty-fifth", "thirtieth", "fortieth", "fiftieth",
        "sixtieth",
    ]

    /// Whether `part` (comparable, without its brackets) names an edition
    /// of an album rather than another recording.
    static func isDecoration(_ part: String) -> Bool {
        let pieces = part.split(whereSeparator: { ",;/&+:".contains($0) })
            .flatMap { $0.split(separator: " and ", omittingEmptySubsequences: true) }
            .flatMap { $0.split(separator: " - ", omittingEmptySubsequences: true) }
            .map { $0.split(separator: " ").map { $0.trimmingCharacters(in: wordEdges) }.filter { !$0.isEmpty } }
            .filter { !$0.isEmpty }
        // A year on its own names the edition another piece names:
        // "[2011 - Remaster]", "(Remastered) [2011 / Deluxe]".
        let named = pieces.filter { !$0.allSatisfy(isYear) }
        return !named.isEmpty && named.allSatisfy(isEditionWords)
    }

    /// One piece of a decoration, as words.
    static func isEditionWords(_ words: [String]) -> Bool {
        if words.contains(where: otherRecordings.contains) { return false }
        if isDisc(words) || words.count == 1 && isJapaneseEdition(words[0]) { return true }
        // "… Edition": an edition of the album, whatever its name.
        if let last = words.last, editionWords.contains(last) { return true }
        var named = false
        var mix = false
        var year = false
        let anniversary = words.contains { anniversaryWords.contains($0) }
        for word in words {
            if editionMarks.contains(word) { named = true; continue }
            // "(2019 Digital Master)": a master with its year or as digital.
            if word == "master", words.contains("digital") || words.contains(where: isYear) { named = true; continue }
            // "(25 Aniversario)": a bare number counts the years.
            if anniversary, Int(word) != nil { continue }
            if word == "mix" || word == "remix" { mix = true; continue }
            if isYear(word) { year = true; continue }
            if isOrdinal(word) || fillers.contains(word) { continue }
            return false
        }
        // A remix is another recording unless it is a year's ("(2022 Remix)").
        if words.contains("remix") && !year { return false }
        if named || mix && (year || words.contains("original")) { return true }
        // "(U.S. Version)", "(International Version)": a market's edition.
        return words.last == "version" && words.contains(where: regions.contains)
    }

    static let anniversaryWords: Set<String> = ["anniversary", "aniversario", "anniversaire", "anniversario", "jubilaum"]

    static let regions: Set<String> = [
        "us", "uk", "eu", "european", "japan", "japanese", "international", "american", "australian", "german", "u.s", "u.k", "usa",
    ]

    /// Words that make a piece an edition.
    static let editionMarks: Set<String> = [
        "remaster", "remastered", "remasters", "remastering", "remasterizado", "remasterizada", "remasterise", "remasterisee",
        "remasterizzato", "remasterizzata", "remasterisiert", "remasterizing",
        "deluxe", "super", "expanded", "bonus", "special", "limited", "collectors", "collector", "anniversary",
        "reissue", "re-issue", "reissued", "explicit", "clean", "mono", "stereo", "legacy", "definitive",
        "uncensored", "censored", "hd", "hi-res", "24-bit", "24bit", "sacd", "re-mastered", "re-master", "re-edition",
        "reedition", "re-release", "rerelease", "extended", "edited", "edeluxe", "archive", "extendida", "extendido",
        "especial", "ampliada", "ampliado", "erweiterte", "speciale", "limitee", "limitada", "limitata", "переиздание",
        "lujo", "luxo", "comemorativa", "conmemorativa", "aniversario", "anniversaire", "anniversario", "jubilaum", "booklet",
    ]
    /// Words an edition piece may hold beside its marks.
    static let fillers: Set<String> = [
        "edition", "editions", "version", "versions", "ed", "edicion", "edicao", "edizione", "ausgabe", "the", "a", "with", "in",
        "track", "tracks", "digital", "digitally", "album", "lp", "cd", "original", "us", "uk", "eu", "european", "japan",
        "japanese", "international", "american", "australian", "german", "bit", "year", "years",
        "of", "and", "+", "-", "complete", "bonus-track", "bonustrack", "bonustracks", "plus", "revised", "u.s", "u.k",
        "usa", "recording", "recordings", "collection", "first", "second", "third", "fifth", "tenth", "fifteenth",
        "twentieth", "twenty-fifth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "box", "set", "boxset", "de", "video",
        "mp3", "amazon", "exclusive",
    ]
    /// Words after which a piece is an edition whatever precedes it.
    static let editionWords: Set<String> = ["edition", "edicion", "edicao", "edizione", "ausgabe", "ed"]
    /// Words that name another recording: such a piece is never an edition.
    static let otherRecordings: Set<String> = [
        "live", "acoustic", "instrumental", "instrumentals", "remixes", "remixed", "demo", "demos", "karaoke",
        "unplugged", "commentary", "cappella", "orchestral", "piano", "dub", "sessions", "session", "covers",
        "soundtrack", "score", "taylors", "re-recorded", "rerecorded", "sped", "slowed", "reverb", "chopped", "screwed",
        "radio", "edit", "edits", "single", "ep", "vol", "volume", "part", "pt", "chapter", "act", "book",
        "stripped", "symphonic", "orchestra", "reimagined", "acapella", "nightcore", "lofi", "cover",
    ]
    static let discWords: Set<String> = ["disc", "disk", "cd"]

    /// "Disc 2", "CD 1 of 2", "Disc One", "CD1", "2 CD", "2CD".
    static func isDisc(_ words: [String]) -> Bool {
        if (words.count == 2 || words.count == 4 && words[2] == "of"), discWords.contains(words[0]),
           Int(words[1]) != nil || numberWords.contains(words[1]) {
            return true
        }
        if words.count == 2, Int(words[0]) != nil, ["cd", "cds", "discs", "disc"].contains(words[1]) { return true }
        guard words.count == 1 else { return false }
        let word = words[0]
        for prefix in discWords where word.hasPrefix(prefix) && Int(word.dropFirst(prefix.count)) != nil { return true }
        return word.hasSuffix("cd") && Int(word.dropLast(2)) != nil
    }

    /// A Japanese release's edition: "初回限定盤" (first pressing, limited),
    /// "通常盤" (regular), "DVD付" (with a DVD), "DVD付B".
    static func isJapaneseEdition(_ word: String) -> Bool {
        word.hasSuffix("盤") || word.contains("付") && word.unicodeScalars.count <= 12
    }
    static let numberWords: Set<String> = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]

    static func isYear(_ word: String) -> Bool {
        word.utf8.count == 4 && word.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && (word.hasPrefix("19") || word.hasPrefix("20"))
    }

    /// "25th", "1st", "50th", "2nd", "3rd".
    static func isOrdinal(_ word: String) -> Bool {
        let digits = word.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return false }
        return ["st", "nd", "rd", "th", "o", "a", "e"].contains(word.dropFirst(digits.count))
    }

    static let wordEdges = CharacterSet(charactersIn: ".!,()[]{}")
    static let closing: [UInt8: UInt8] = [UInt8(ascii: ")"): UInt8(ascii: "("), UInt8(ascii: "]"): UInt8(ascii: "["),
                                          UInt8(ascii: "}"): UInt8(ascii: "{")]

    /// Where featured credits begin in a comparable artist.
    static let featuredMarkers: [[UInt8]] = [" feat.", " feat ", " ft.", " ft ", " featuring ", " with ",
                                             "(feat.", "(feat ", "(ft.", "(ft ", "(featuring ", "(with ", "[feat.", "[feat ", "[ft.", "[ft ",
                                             "[featuring ", "[with "]
        .map { Array($0.utf8) }

    static func trimmingSeparators(_ text: Substring) -> String {
        var text = text
        while let last = text.last, last == " " || last == "-" || last == "," || last == ":" || last == "/" { text = text.dropLast() }
        return String(text)
    }

    // MARK: - Characters

    /// The ASCII text folded, without Foundation: lowercased, quotes
    /// removed, spacing collapsed; nil when `text` holds anything else.
    static func comparableASCII(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            guard byte < 0x80 else { return nil }
            switch byte {
            case 0x27, 0x22, 0x60: continue  // ' " `
            case 0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C:
                pendingSpace = !bytes.isEmpty
                continue
            default:
                if pendingSpace { bytes.append(0x20); pendingSpace = false }
                bytes.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F: true
        default: false
        }
    }

    static func isQuote(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x22, 0x27, 0x60, 0xB4, 0x2018...0x201F, 0x2032, 0x2033, 0x2035, 0x2036, 0x00AB, 0x00BB, 0x2039, 0x203A,
             0x02BB, 0x02BC, 0x02B9, 0xFF02, 0xFF07, 0x300C, 0x300D, 0x300E, 0x300F: true
        default: false
        }
    }

    static func isDash(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2D, 0x2010...0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D, 0x2E3A, 0x2E3B: true
        default: false
        }
    }

    static let lettersSpelledOut: [Unicode.Scalar: String] = [
        "æ": "ae", "œ": "oe", "ø": "o", "ß": "ss", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ħ": "h",
    ]
}

/// How one person's plays group into albums and artists: by the edition
/// rule (`AlbumIdentity`, the default), or as spelled with case aside (how
/// Vinylogue counted before the rule, kept for whoever turns it off); and,
/// with the rule on, the albums their listens tie together by MusicBrainz
/// release (`AlbumReleases`) and their own choices about single albums
/// (`AlbumChoice`): spellings kept apart, albums joined.
public struct AlbumFolding: Sendable, Hashable, Codable {
    /// Whether editions fold into their album (and names compare as
    /// `AlbumIdentity.comparable` does).
    public var foldsEditions: Bool
    /// Spellings (`spellingKey`) that are albums of their own.
    public private(set) var keptApart: Set<String> = []
    /// Album keys joined to another album's key (never to a key that is
    /// itself joined: a join to a joined album is made to its target).
    public private(set) var joined: [String: String] = [:]
    /// Rule keys that share a MusicBrainz release with another album's
    /// listens, each to its group's key (`AlbumReleases.groups`).
    public private(set) var sameRelease: [String: String] = [:]
    /// The joins as the person made them (`joined` is them, grouped).
    private var choiceJoins: [String: String] = [:]

    public init(foldsEditions: Bool = true, choices: [AlbumChoice] = [], sameRelease: [String: String] = [:]) {
        self.foldsEditions = foldsEditions
        self.sameRelease = sameRelease.filter { $0.key != $0.value }
        for choice in choices {
            switch choice.kind {
            case .apart: keptApart.insert(choice.key)
            case .join: if let target = choice.target { choiceJoins[choice.key] = target }
            }
        }
        joined = choiceJoins
        groupJoins()
    }

    /// The album keys that are joined to another.
    public var joinedKeys: Dictionary<String, String>.Keys { joined.keys }

    /// Joins made before a release tied their album (or its target) to
    /// others hold for the whole group, named by the group's key: the
    /// join made on the group's own key first, else the one from the
    /// smallest key; a join to an album joined in turn reaches that
    /// album's target; none reaches back to where it began.
    private mutating func groupJoins() {
        guard !sameRelease.isEmpty, !choiceJoins.isEmpty else { joined = choiceJoins; return }
        var grouped: [String: String] = [:]
        for key in choiceJoins.keys.sorted() {
            let source = sameRelease[key] ?? key, to = sameRelease[choiceJoins[key]!] ?? choiceJoins[key]!
            if source != to, grouped[source] == nil || source == key { grouped[source] = to }
        }
        joined = [:]
        for (source, target) in grouped {
            var to = target, seen: Set<String> = [source]
            var loops = false
            while let next = grouped[to] {
                guard seen.insert(to).inserted, next != source else { loops = true; break }
                to = next
            }
            if !loops { joined[source] = to }
        }
    }

    /// This grouping with the person's groups made `groups` (`AlbumReleases.groups`).
    public func withSameRelease(_ groups: [String: String]) -> AlbumFolding {
        var regrouped = self
        regrouped.sameRelease = groups.filter { $0.key != $0.value }
        regrouped.groupJoins()
        return regrouped
    }

    /// This grouping with `ties` added to the person's own (a chart from
    /// elsewhere ties its rows by the release each names).
    public func tied(_ ties: [AlbumReleases.Tie]) -> AlbumFolding {
        guard foldsEditions, !ties.isEmpty else { return self }
        // The groups already made, as ties of their own (to a name no
        // MBID has), then the new ones.
        var all = sameRelease.flatMap { key, group in
            [AlbumReleases.Tie(mbid: "group " + group, key: key), AlbumReleases.Tie(mbid: "group " + group, key: group)]
        }
        all += ties
        return withSameRelease(AlbumReleases.groups(all))
    }

    /// The rule: editions are one album.
    public static let editions = AlbumFolding(foldsEditions: true)
    /// Every spelling its own album, case aside.
    public static let asSpelled = AlbumFolding(foldsEditions: false)

    /// Whether the person's choices change anything (they apply while
    /// editions fold).
    public var hasChoices: Bool { foldsEditions && !(keptApart.isEmpty && joined.isEmpty) }

    /// Whether the spelling `artist` / `album` is one album with `toArtist`
    /// / `toAlbum` only because their listens share a MusicBrainz release
    /// (the rule keeps them apart).
    public func tiedByRelease(artist: String, album: String, toArtist: String, toAlbum: String) -> Bool {
        guard foldsEditions, !sameRelease.isEmpty, let own = AlbumIdentity.key(artist: artist, album: album),
              let other = AlbumIdentity.key(artist: toArtist, album: toAlbum), own != other else { return false }
        return (sameRelease[own] ?? own) == (sameRelease[other] ?? other)
    }

    /// The album key a rule key (`AlbumIdentity.key`) counts under: its
    /// release group's, then the album that is joined to, if any.
    public func albumKey(ofRuleKey key: String) -> String {
        guard foldsEditions else { return key }
        let grouped = sameRelease[key] ?? key
        return joined[grouped] ?? grouped
    }

    /// A name as a chart groups it: the group's artist and name as they
    /// compare (which also break ties in rank), and its key.
    public struct Folded: Sendable, Hashable {
        public let artist: String
        public let name: String
        public let key: String
    }

    /// How a play of `name` (an album, artist or track, by `kind`) by
    /// `artist` groups in a chart of `kind`.
    public func folded(_ kind: ChartKind, artist: String, name: String) -> Folded {
        guard foldsEditions else {
            let a = artist.lowercased()
            return kind == .artist ? Folded(artist: a, name: a, key: a) : fold(a, name.lowercased())
        }
        switch kind {
        case .artist:
            let a = AlbumIdentity.comparable(artist)
            return Folded(artist: a, name: a, key: a)
        case .album:
            let own = unjoined(artist: artist, album: name)
            guard !joined.isEmpty, let target = joined[own.key] else { return own }
            return Self.folded(key: target)
        case .track: return fold(AlbumIdentity.comparable(artist), AlbumIdentity.comparable(name))
        }
    }

    /// The album a spelling belongs to before joins: its rule key (or the
    /// key of the albums a MusicBrainz release ties it to), or its own key
    /// when it is kept apart (`apartPrefix` and `spellingKey`).
    public func unjoined(artist: String, album: String) -> Folded {
        let own = ungrouped(artist: artist, album: album)
        guard !sameRelease.isEmpty, let group = sameRelease[own.key] else { return own }
        return Self.folded(key: group)
    }

    /// The album a spelling belongs to by the rule alone: its rule key, or
    /// its own key when it is kept apart. A join is made on this key, so
    /// it stays with the spelling whatever releases later tie or untie.
    public func ungrouped(artist: String, album: String) -> Folded {
        if !keptApart.isEmpty {
            let spelled = Self.spellingKey(artist: artist, album: album)
            if keptApart.contains(spelled) { return Self.folded(key: Self.apartPrefix + spelled) }
        }
        return fold(AlbumIdentity.artist(artist), AlbumIdentity.title(album))
    }

    /// A spelling as a choice names it: artist and album as they compare
    /// (case, normalisation, width, quotes and spacing aside), decorations
    /// and featured credits kept.
    public static func spellingKey(artist: String, album: String) -> String {
        AlbumIdentity.comparable(artist) + "\u{1F}" + AlbumIdentity.comparable(album)
    }

    /// What begins a kept-apart spelling's key: a control character, which
    /// no comparable name begins with (an artist called "=Foo" is not one).
    public static let apartPrefix = "\u{1E}"

    /// The names a key stands for (a kept-apart key without its prefix).
    static func folded(key: String) -> Folded {
        let names = key.hasPrefix(apartPrefix) ? key.dropFirst() : key[...]
        let parts = names.split(separator: "\u{1F}", maxSplits: 1, omittingEmptySubsequences: false)
        return Folded(artist: String(parts[0]), name: parts.count > 1 ? String(parts[1]) : "", key: key)
    }

    private func fold(_ artist: String, _ name: String) -> Folded {
        Folded(artist: artist, name: name, key: artist + "\u{1F}" + name)
    }
}

extension WeeklyChart {
    /// The chart with the rows `folding` groups together made one (plays
    /// summed, named by the spelling with the most plays, ranked again):
    /// what a chart counted elsewhere (Last.fm's, by spelling) is here.
    public func folded(_ folding: AlbumFolding = .editions) -> WeeklyChart {
        // Rows that name one release are one album (`AlbumReleases`).
        let ties = kind == .album ? entries.compactMap { entry in
            entry.mbid.flatMap { AlbumReleases.Release(Scrobble(instant: 0, artist: entry.artist, album: entry.name, track: "", albumMBID: $0))?.tie }
        } : []
        var tally = ScrobbleTally.Tally(kind: kind, folding: folding.tied(ties))
        for entry in entries {
            switch kind {
            case .album: tally.add(artist: entry.artist, album: entry.name, track: "", mbid: entry.mbid, plays: entry.plays)
            case .artist: tally.add(artist: entry.artist, album: "", track: "", mbid: entry.mbid, plays: entry.plays)
            case .track: tally.add(artist: entry.artist, album: "", track: entry.name, mbid: entry.mbid, plays: entry.plays)
            }
        }
        let ranked = tally.ranked()
        // Nothing joined: the chart as it came (its ranks, its ties).
        return ranked.count == entries.count ? self : WeeklyChart(user: user, kind: kind, week: week, entries: ranked)
    }
}

/// Charts counted elsewhere by spelling (Last.fm's), folded as the
/// archive's are (`WeeklyChart.folded`), by each person's choice.
public struct FoldedChartSource: ChartSource {
    public let charts: any ChartSource
    /// A person's choice (asked only when one of their charts is fetched).
    public let folding: @Sendable (Username) async -> AlbumFolding

    public init(charts: any ChartSource, folding: @escaping @Sendable (Username) async -> AlbumFolding = { _ in .editions }) {
        self.charts = charts
        self.folding = folding
    }

    public func chartList(for user: Username) async throws(SourceError) -> ChartWeekList {
        try await charts.chartList(for: user)
    }

    public func chart(for user: Username, kind: ChartKind, week: ChartWeek) async throws(SourceError) -> WeeklyChart {
        let chart = try await charts.chart(for: user, kind: kind, week: week)
        return chart.folded(await folding(user))
    }

    public func charts(for user: Username, kind: ChartKind, weeks: [ChartWeek]) async throws(SourceError) -> [WeeklyChart] {
        let charts = try await charts.charts(for: user, kind: kind, weeks: weeks)
        let folding = await folding(user)
        return charts.map { $0.folded(folding) }
    }
}
