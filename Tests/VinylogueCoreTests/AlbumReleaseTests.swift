import Foundation
import Testing
@testable import VinylogueCore

/// Albums tied by MusicBrainz release (`AlbumReleases`, `AlbumFolding.sameRelease`).
@Suite struct AlbumReleaseTests {
    static let okComputer = "11111111-2222-3333-4444-555555555555"
    static let tidewater = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"

    static func key(_ artist: String, _ album: String) -> String { AlbumIdentity.key(artist: artist, album: album)! }

    @Test func aReleaseIdIsAUUIDInLowerCase() {
        #expect(AlbumReleases.uuid("AB12CD34-0000-4000-8000-0123456789AB") == "ab12cd34-0000-4000-8000-0123456789ab")
        for bad in ["", "not-an-id", "ab12cd34-0000-4000-8000-0123456789a", "ab12cd34_0000-4000-8000-0123456789ab",
                    "ab12cd34-0000-4000-8000-0123456789ag", "ab12cd34-0000-4000-8000-0123456789abc"] {
            #expect(AlbumReleases.uuid(bad) == nil, "\(bad)")
        }
        #expect(AlbumReleases.Release(Scrobble(instant: 0, artist: "A", album: "", track: "t", albumMBID: Self.okComputer)) == nil)
        #expect(AlbumReleases.Release(Scrobble(instant: 0, artist: "A", album: "B", track: "t", albumMBID: "0")) == nil)
        // The nil UUID is what some players send for "none": it ties nothing.
        #expect(AlbumReleases.uuid("00000000-0000-0000-0000-000000000000") == nil)
    }

    @Test func tiesMakeGroupsThroughEveryReleaseTheyShare() {
        // a–b share one release, b–c another: one group; d alone; e–f apart.
        let ties = [("m1", "a"), ("m1", "b"), ("m2", "c"), ("m2", "b"), ("m3", "d"), ("m4", "f"), ("m4", "e")]
            .map { AlbumReleases.Tie(mbid: $0.0, key: $0.1) }
        let groups = AlbumReleases.groups(ties)
        #expect(groups == ["a": "a", "b": "a", "c": "a", "e": "e", "f": "e"])
        // Whatever order the ties come in.
        for _ in 0..<20 { #expect(AlbumReleases.groups(ties.shuffled()) == groups) }
        #expect(AlbumReleases.groups([AlbumReleases.Tie]()) == [:])
    }

    @Test func anIdOnAWholeLibraryTiesNothingButACompilationsArtistsAreOneAlbum() {
        // A tagger wrote one release id on ten different albums.
        let mistaken = (0..<10).map { AlbumReleases.Tie(mbid: "m", key: Self.key("Artist \($0)", "Album \($0)")) }
        #expect(AlbumReleases.groups(mistaken).isEmpty)
        // A compilation scrobbled with each track's artist: one title, thirty artists.
        let compilation = (0..<30).map { AlbumReleases.Tie(mbid: "c", key: Self.key("Artist \($0)", "Now That's What I Call Music! 52")) }
        #expect(Set(AlbumReleases.groups(compilation).values).count == 1)
        #expect(AlbumReleases.groups(compilation).count == 30)
        // Four titles still tie (an original, its translation, two reissue names).
        let four = ["Amélie", "Le Fabuleux Destin d'Amélie Poulain", "Amelie OST", "Amélie (Bande originale)"]
            .map { AlbumReleases.Tie(mbid: "a", key: Self.key("Yann Tiersen", $0)) }
        #expect(Set(AlbumReleases.groups(four).values).count == 1)
    }

    @Test func aTiedSpellingCountsAsItsGroupsAlbum() {
        let ok = Self.key("Radiohead", "OK Computer"), oknotok = Self.key("Radiohead", "OK Computer OKNOTOK 1997 2017")
        #expect(ok != oknotok, "the rule keeps these apart")
        let groups = AlbumReleases.groups([.init(mbid: Self.okComputer, key: oknotok), .init(mbid: Self.okComputer, key: ok)])
        let folding = AlbumFolding(foldsEditions: true, sameRelease: groups)
        let a = folding.folded(.album, artist: "Radiohead", name: "OK Computer OKNOTOK 1997 2017")
        let b = folding.folded(.album, artist: "Radiohead", name: "OK Computer (Remastered)")
        #expect(a.key == b.key)
        #expect(a.key == min(ok, oknotok))
        #expect(folding.albumKey(ofRuleKey: oknotok) == a.key)
        // Turned off, spellings count apart, ties and all.
        var off = folding
        off.foldsEditions = false
        #expect(off.folded(.album, artist: "Radiohead", name: "OK Computer OKNOTOK 1997 2017").key
            != off.folded(.album, artist: "Radiohead", name: "OK Computer").key)
    }

    @Test func keepingASpellingApartWinsOverItsRelease() {
        let ok = Self.key("Radiohead", "OK Computer"), oknotok = Self.key("Radiohead", "OK Computer OKNOTOK 1997 2017")
        let groups = AlbumReleases.groups([.init(mbid: Self.okComputer, key: oknotok), .init(mbid: Self.okComputer, key: ok)])
        let changed = AlbumChoiceChange.keepApart(artist: "Radiohead", album: "OK Computer OKNOTOK 1997 2017")
            .applied(to: [], sameRelease: groups, at: Date(timeIntervalSince1970: 0))
        let (choices, touched) = try! #require(changed)
        #expect(touched == [min(ok, oknotok)])
        let folding = AlbumFolding(foldsEditions: true, choices: choices, sameRelease: groups)
        #expect(folding.folded(.album, artist: "Radiohead", name: "OK Computer OKNOTOK 1997 2017").key.hasPrefix(AlbumFolding.apartPrefix))
        #expect(folding.folded(.album, artist: "Radiohead", name: "OK Computer").key == min(ok, oknotok))
    }

    @Test func aJoinMadeBeforeATieHoldsForTheWholeGroup() {
        // "Amélie" was joined to the soundtrack by hand; then a release tied
        // a translated spelling to the album the join came from.
        let amelie = Self.key("Yann Tiersen", "Amélie"), fabuleux = Self.key("Yann Tiersen", "Le Fabuleux Destin d'Amélie Poulain")
        let soundtrack = Self.key("Yann Tiersen", "Amelie Soundtrack")
        let join = AlbumChoice(kind: .join, key: amelie, target: soundtrack, artist: "Yann Tiersen", album: "Amélie",
                               targetArtist: "Yann Tiersen", targetAlbum: "Amelie Soundtrack", madeAt: Date(timeIntervalSince1970: 0))
        let groups = AlbumReleases.groups([.init(mbid: "m", key: amelie), .init(mbid: "m", key: fabuleux)])
        let folding = AlbumFolding(foldsEditions: true, choices: [join], sameRelease: groups)
        #expect(folding.folded(.album, artist: "Yann Tiersen", name: "Le Fabuleux Destin d'Amélie Poulain").key == soundtrack)
        #expect(folding.folded(.album, artist: "Yann Tiersen", name: "Amélie").key == soundtrack)
    }

    @Test func whatATieTouchesIsEachChangedAlbumAsChartedAndAsItWillCount() {
        let before = ["a": "a", "b": "a"], after = ["a": "a", "b": "a", "c": "a"]
        let folding = AlbumFolding(foldsEditions: true, sameRelease: before)
        #expect(AlbumReleases.touched(to: after, folding: folding) == ["c", "a"])
        // A group that splits: b's charts hold "a" now.
        #expect(AlbumReleases.touched(to: [:], folding: folding) == ["a", "b"])
        // An album joined to a key that a tie then groups counts under the
        // group's key: its rows move too.
        let join = AlbumChoice(kind: .join, key: "p", target: "x", artist: "P", album: "P", targetArtist: "X", targetAlbum: "X",
                               madeAt: Date(timeIntervalSince1970: 0))
        let joined = AlbumFolding(foldsEditions: true, choices: [join])
        #expect(AlbumReleases.touched(to: ["r": "r", "x": "r"], folding: joined) == ["x", "r"])
    }

    static let p = key("Pearl Jam", "Ten"), x = key("Pearl Jam", "Ten Redux"), r = key("Pearl Jam", "Rearviewmirror")

    @Test func undoingAJoinWhoseTargetATieGroupedTouchesWhereItCountsNow() throws {
        let join = try #require(AlbumChoiceChange.join(artist: "Pearl Jam", album: "Ten", toArtist: "Pearl Jam", toAlbum: "Ten Redux")
            .applied(to: [], at: Date(timeIntervalSince1970: 0)))
        // Then a release ties "Ten Redux" to "Rearviewmirror", whose key is smaller.
        let groups = AlbumReleases.groups([.init(mbid: "m", key: Self.x), .init(mbid: "m", key: Self.r)])
        #expect(groups[Self.x] == Self.r)
        let folding = AlbumFolding(foldsEditions: true, choices: join.choices, sameRelease: groups)
        #expect(folding.folded(.album, artist: "Pearl Jam", name: "Ten").key == Self.r)
        let undone = try #require(AlbumChoiceChange.undo(.join, key: Self.p).applied(to: join.choices, sameRelease: groups,
                                                                                        at: Date(timeIntervalSince1970: 1)))
        #expect(undone.touched.contains(Self.r), "its rows are kept under the group's key")
    }

    @Test func aJoinStaysWithTheSpellingItWasMadeOnWhenItsGroupSplits() throws {
        // "Ten" is tied to "Ten Redux" by a release when the person joins it to "Rearviewmirror".
        let groups = AlbumReleases.groups([.init(mbid: "m", key: Self.p), .init(mbid: "m", key: Self.x)])
        let join = try #require(AlbumChoiceChange.join(artist: "Pearl Jam", album: "Ten", toArtist: "Pearl Jam", toAlbum: "Rearviewmirror")
            .applied(to: [], sameRelease: groups, at: Date(timeIntervalSince1970: 0)))
        #expect(join.choices.map(\.key) == [Self.p])
        let tied = AlbumFolding(foldsEditions: true, choices: join.choices, sameRelease: groups)
        #expect(tied.folded(.album, artist: "Pearl Jam", name: "Ten Redux").key == Self.r, "the whole group follows the join")
        // The tie goes (its listens forgotten): "Ten" stays joined, "Ten Redux" is its own again.
        let untied = AlbumFolding(foldsEditions: true, choices: join.choices)
        #expect(untied.folded(.album, artist: "Pearl Jam", name: "Ten").key == Self.r)
        #expect(untied.folded(.album, artist: "Pearl Jam", name: "Ten Redux").key == Self.x)
    }

    @Test func joinsInOneGroupResolveTheSameWayEveryTimeAndReachTheEndOfAChain() {
        let date = Date(timeIntervalSince1970: 0)
        func join(_ from: String, _ to: String) -> AlbumChoice {
            AlbumChoice(kind: .join, key: from, target: to, artist: from, album: from, targetArtist: to, targetAlbum: to, madeAt: date)
        }
        // b and c are one group (key b); each was joined elsewhere; y is joined to z.
        let choices = [join("c", "x"), join("b", "y"), join("y", "z")]
        let folding = AlbumFolding(foldsEditions: true, choices: choices, sameRelease: ["b": "b", "c": "b"])
        for _ in 0..<20 {
            let again = AlbumFolding(foldsEditions: true, choices: choices.shuffled(), sameRelease: ["c": "b", "b": "b"])
            #expect(again.albumKey(ofRuleKey: "c") == folding.albumKey(ofRuleKey: "c"))
        }
        #expect(folding.albumKey(ofRuleKey: "c") == "z", "the group's own join, to the end of its chain")
        // A chain that comes back to where it began joins nothing.
        let loop = AlbumFolding(foldsEditions: true, choices: [join("a", "q"), join("q", "b")], sameRelease: ["a": "a", "b": "a"])
        #expect(loop.albumKey(ofRuleKey: "b") == "a")
    }

    @Test func aWeeksChartFromElsewhereJoinsRowsOfOneRelease() {
        let week = ChartWeek(from: 1_700_000_000, to: 1_700_604_800)
        let chart = WeeklyChart(user: try! Username("ana"), kind: .album, week: week, entries: [
            ChartEntry(rank: 1, artist: "Radiohead", name: "OK Computer", plays: 5, mbid: Self.okComputer),
            ChartEntry(rank: 2, artist: "Radiohead", name: "OK Computer OKNOTOK 1997 2017", plays: 4, mbid: Self.okComputer),
            ChartEntry(rank: 3, artist: "Vetiver", name: "Tidewater", plays: 3, mbid: Self.tidewater),
        ])
        let folded = chart.folded()
        #expect(folded.entries.map(\.name) == ["OK Computer", "Tidewater"])
        #expect(folded.entries.map(\.plays) == [9, 3])
    }
}

/// Regrouping only what a write's ties reach gives what grouping every tie
/// again gives, whatever the order ties arrive in, a release going over
/// `titlesPerRelease` titles (and so untying) included.
@Suite struct AlbumRegroupingTests {
    /// The walk a store makes: every tie of every release reachable from
    /// `start` through shared keys.
    static func component(of start: Set<String>, in ties: [AlbumReleases.Tie]) -> [AlbumReleases.Tie] {
        var releases = start, keys = Set<String>()
        while true {
            let found = ties.filter { releases.contains($0.mbid) }
            let moreKeys = keys.union(found.map(\.key))
            let moreReleases = releases.union(ties.filter { moreKeys.contains($0.key) }.map(\.mbid))
            if moreKeys == keys && moreReleases == releases { return found }
            (keys, releases) = (moreKeys, moreReleases)
        }
    }

    @Test(arguments: 0..<40)
    func regroupingWhatAWriteReachesIsRegroupingEverything(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed))
        let artists = (0..<12).map { "artist \($0)" }
        let titles = (0..<7).map { "title \($0)" }
        let releases = (0..<9).map { String(format: "%08x-0000-4000-8000-000000000000", $0) }
        var all: [AlbumReleases.Tie] = []
        var groups: [String: String] = [:]
        for _ in 0..<12 {
            // A write's new ties: a few spellings with a release each.
            var added: [AlbumReleases.Tie] = []
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let key = AlbumIdentity.key(artist: artists.randomElement(using: &rng)!, album: titles.randomElement(using: &rng)!)!
                let tie = AlbumReleases.Tie(mbid: releases.randomElement(using: &rng)!, key: key)
                if !all.contains(tie) && !added.contains(tie) { added.append(tie) }
            }
            let sharing = Set(added.filter { new in (all + added).contains { $0.mbid == new.mbid && $0.key != new.key } }.map(\.mbid))
            all += added
            if !sharing.isEmpty { groups = AlbumReleases.regrouped(groups, component: Self.component(of: sharing, in: all)) }
            // The same albums together as grouping every tie; each named by one of its keys.
            #expect(Self.partition(groups) == Self.partition(AlbumReleases.groups(all)), "seed \(seed)")
            #expect(groups.allSatisfy { groups[$0.value] == $0.value }, "a group's key is one of its own")
        }
    }

    static func partition(_ groups: [String: String]) -> Set<Set<String>> {
        Set(Dictionary(grouping: groups.keys) { groups[$0]! }.values.map(Set.init))
    }

    /// A group that gains a member keeps its key, even when the member's key
    /// is smaller; a new group takes its smallest; merging keeps the
    /// larger group's key.
    @Test func aGroupKeepsItsKeyAsMembersJoin() {
        let id = "aaaaaaaa-0000-4000-8000-000000000000", other = "bbbbbbbb-0000-4000-8000-000000000000"
        let (m, t, b, a, x, y, z) = ("m", "t", "b", "a", "x", "y", "z")
        var ties = [AlbumReleases.Tie(mbid: id, key: m), AlbumReleases.Tie(mbid: id, key: t)]
        var groups = AlbumReleases.regrouped([:], component: ties)
        #expect(groups == [m: m, t: m])
        ties.append(AlbumReleases.Tie(mbid: id, key: b))
        groups = AlbumReleases.regrouped(groups, component: ties)
        #expect(groups == [m: m, t: m, b: m], "b is smaller, yet the group keeps its key")
        // Another release's group of three, {x, y, z} (named x), then a tie that merges it in.
        let others = [AlbumReleases.Tie(mbid: other, key: x), AlbumReleases.Tie(mbid: other, key: y), AlbumReleases.Tie(mbid: other, key: z)]
        groups = AlbumReleases.regrouped(groups, component: others)
        #expect(groups[z] == x && groups[m] == m)
        let merging = AlbumReleases.Tie(mbid: other, key: a)
        groups = AlbumReleases.regrouped(groups, component: ties + others + [merging, AlbumReleases.Tie(mbid: id, key: a)])
        #expect(Set(groups.values).count == 1 && groups.count == 7, "merged into one group named by one of the old names")
        #expect(groups[a] == m, "two groups of three: the smaller old key wins the tie")
        #expect(AlbumReleases.keeping([:], AlbumReleases.groups(ties)) == AlbumReleases.groups(ties))
    }

    @Test func aReleaseOverItsTitlesUntiesWhatItTiedAndOnlyThat() {
        let id = "aaaaaaaa-0000-4000-8000-000000000000", other = "bbbbbbbb-0000-4000-8000-000000000000"
        func key(_ n: Int) -> String { AlbumIdentity.key(artist: "A", album: "T\(n)")! }
        var ties = (0..<4).map { AlbumReleases.Tie(mbid: id, key: key($0)) } + [AlbumReleases.Tie(mbid: other, key: key(8)),
                                                                                 AlbumReleases.Tie(mbid: other, key: key(9))]
        let before = AlbumReleases.groups(ties)
        #expect(Set(before.values) == [key(0), key(8)])
        ties.append(AlbumReleases.Tie(mbid: id, key: key(5)))
        let after = AlbumReleases.regrouped(before, component: Self.component(of: [id], in: ties))
        #expect(after == [key(8): key(8), key(9): key(8)])
        let changes = AlbumReleases.changes(from: before, to: after)
        #expect(changes.gone == (0..<4).map(key) && changes.set.isEmpty)
    }
}
