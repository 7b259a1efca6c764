import Foundation
import Testing
@testable import VinylogueCore

/// A person's choices about single albums (`AlbumChoice`) on top of the
/// edition rule: "Keep apart", "Same album as…", and undoing each.
@Suite struct AlbumChoiceTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    func key(_ folding: AlbumFolding, _ artist: String, _ album: String) -> String {
        folding.folded(.album, artist: artist, name: album).key
    }

    func apply(_ change: AlbumChoiceChange, to choices: [AlbumChoice]) throws -> (choices: [AlbumChoice], touched: Set<String>) {
        try #require(change.applied(to: choices, at: Self.now))
    }

    @Test func aSpellingKeptApartIsAnAlbumOfItsOwnAndTheOtherEditionsStayOne() throws {
        let rule = AlbumFolding.editions
        let album = key(rule, "The Beatles", "Abbey Road")
        #expect(key(rule, "The Beatles", "Abbey Road (2019 Mix)") == album)
        let (choices, touched) = try apply(.keepApart(artist: "The Beatles", album: "Abbey Road (2019 Mix)"), to: [])
        #expect(touched == [album], "the weeks of the album it leaves are counted again")
        let folding = AlbumFolding(foldsEditions: true, choices: choices)
        let apart = key(folding, "The Beatles", "Abbey Road (2019 Mix)")
        #expect(apart != album)
        // Case, normalisation and spacing aside, it is the same spelling.
        #expect(key(folding, "the beatles", "ABBEY  ROAD (2019 mix)") == apart)
        #expect(key(folding, "The Beatles", "Abbey Road (Remastered)") == album)
        #expect(key(folding, "The Beatles", "Abbey Road") == album)
        // Kept apart once is enough.
        #expect(AlbumChoiceChange.keepApart(artist: "The Beatles", album: "Abbey Road (2019 Mix)").applied(to: choices, at: Self.now) == nil)
    }

    @Test func anAlbumJoinedToAnotherCountsAsItInEveryChart() throws {
        let (choices, touched) = try apply(.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead", toAlbum: "OK Computer"), to: [])
        #expect(touched == [key(.editions, "Radiohead", "OKNOTOK 1997 2017")])
        let folding = AlbumFolding(foldsEditions: true, choices: choices)
        #expect(key(folding, "Radiohead", "OKNOTOK 1997 2017") == key(.editions, "Radiohead", "OK Computer"))
        #expect(key(folding, "Radiohead", "OKNOTOK 1997 2017 (Remastered)") == key(.editions, "Radiohead", "OK Computer"))
        var tally = ScrobbleTally.Tally(kind: .album, folding: folding)
        for _ in 0..<3 { tally.add(artist: "Radiohead", album: "OKNOTOK 1997 2017", track: "Airbag") }
        for _ in 0..<2 { tally.add(artist: "Radiohead", album: "OK Computer", track: "Lucky") }
        tally.add(artist: "Radiohead", album: "Kid A", track: "Idioteque")
        let chart = tally.ranked()
        #expect(chart.map(\.plays) == [5, 1])
        #expect(chart[0].name == "OKNOTOK 1997 2017", "named by the spelling played most")
        // Joined already: nothing to do; an album is not joined to itself.
        #expect(AlbumChoiceChange.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead", toAlbum: "OK Computer")
            .applied(to: choices, at: Self.now) == nil)
        #expect(AlbumChoiceChange.join(artist: "Radiohead", album: "OK Computer (Remastered)", toArtist: "Radiohead", toAlbum: "OK Computer")
            .applied(to: [], at: Self.now) == nil)
    }

    @Test func whatWasJoinedToAnAlbumFollowsItWhenItIsJoinedInTurn() throws {
        var choices = try apply(.join(artist: "A", album: "X", toArtist: "A", toAlbum: "Y"), to: []).choices
        choices = try apply(.join(artist: "A", album: "Y", toArtist: "A", toAlbum: "Z"), to: choices).choices
        let folding = AlbumFolding(foldsEditions: true, choices: choices)
        let z = key(.editions, "A", "Z")
        #expect(key(folding, "A", "X") == z)
        #expect(key(folding, "A", "Y") == z)
        #expect(Set(folding.joined.values) == [z], "one level: no join points at a joined album")
        // And a join to a joined album goes to where it points.
        let more = try apply(.join(artist: "A", album: "W", toArtist: "A", toAlbum: "X"), to: choices).choices
        #expect(AlbumFolding(foldsEditions: true, choices: more).joined[key(.editions, "A", "W")] == z)
    }

    @Test func undoingAJoinSplitsTheAlbumAgain() throws {
        let joined = try apply(.join(artist: "Radiohead", album: "OKNOTOK 1997 2017", toArtist: "Radiohead", toAlbum: "OK Computer"), to: [])
        let source = key(.editions, "Radiohead", "OKNOTOK 1997 2017")
        let (choices, touched) = try apply(.undo(.join, key: source), to: joined.choices)
        #expect(choices.isEmpty)
        #expect(touched == [key(.editions, "Radiohead", "OK Computer")], "the joined album's weeks are counted again")
        #expect(AlbumChoiceChange.undo(.join, key: source).applied(to: choices, at: Self.now) == nil)
    }

    @Test func undoingKeepApartBringsTheSpellingBackAndWhatWasJoinedToItWithIt() throws {
        let apart = try apply(.keepApart(artist: "Vetiver", album: "Tidewater (Deluxe Edition)"), to: [])
        let spelled = AlbumFolding.spellingKey(artist: "Vetiver", album: "Tidewater (Deluxe Edition)")
        // Something joined to the kept-apart spelling.
        let joined = try apply(.join(artist: "Vetiver", album: "Tidewater Demos", toArtist: "Vetiver", toAlbum: "Tidewater (Deluxe Edition)"),
                               to: apart.choices)
        let before = AlbumFolding(foldsEditions: true, choices: joined.choices)
        #expect(key(before, "Vetiver", "Tidewater Demos") == AlbumFolding.apartPrefix + spelled)
        let (choices, touched) = try apply(.undo(.apart, key: spelled), to: joined.choices)
        #expect(touched == [AlbumFolding.apartPrefix + spelled])
        let after = AlbumFolding(foldsEditions: true, choices: choices)
        let tidewater = key(.editions, "Vetiver", "Tidewater")
        #expect(key(after, "Vetiver", "Tidewater (Deluxe Edition)") == tidewater)
        #expect(key(after, "Vetiver", "Tidewater Demos") == tidewater, "what joined the spelling joins its album")
        #expect(after.keptApart.isEmpty)
    }

    @Test func choicesApplyOnlyWhileEditionsFold() throws {
        let choices = try apply(.keepApart(artist: "The Beatles", album: "Abbey Road (2019 Mix)"), to: []).choices
        let off = AlbumFolding(foldsEditions: false, choices: choices)
        #expect(!off.hasChoices)
        #expect(key(off, "The Beatles", "Abbey Road (2019 Mix)") == key(.asSpelled, "The Beatles", "Abbey Road (2019 Mix)"))
        #expect(AlbumFolding(foldsEditions: true, choices: choices).hasChoices)
    }

    @Test func aChartFoldedByChoicesIsTheSameWhateverTheOrderOfItsListens() throws {
        let choices = try apply(.keepApart(artist: "Fleetwood Mac", album: "Rumours (Super Deluxe)"), to: []).choices
        let folding = AlbumFolding(foldsEditions: true, choices: choices)
        let plays: [(String, String)] = [("Fleetwood Mac", "Rumours"), ("Fleetwood Mac", "Rumours (Super Deluxe)"),
                                         ("Fleetwood Mac", "Rumours - 2004 Remaster"), ("fleetwood mac", "RUMOURS (SUPER DELUXE)"),
                                         ("Fleetwood Mac", "Tusk")]
        var charts: Set<[ChartEntry]> = []
        for order in [plays, plays.reversed(), plays.shuffled(), plays.shuffled()] {
            var tally = ScrobbleTally.Tally(kind: .album, folding: folding)
            for (artist, album) in order { tally.add(artist: artist, album: album, track: "t") }
            charts.insert(tally.ranked().map { ChartEntry(rank: $0.rank, artist: $0.artist.lowercased(), name: $0.name.lowercased(),
                                                          plays: $0.plays, mbid: nil) })
        }
        #expect(charts.count == 1)
        #expect(charts.first!.map(\.plays) == [2, 2, 1])
    }

    /// The rest of an album joined to one of its spellings kept apart:
    /// undoing the keep-apart gives the album back whole, with no join left.
    @Test func undoingKeepApartWhenTheAlbumWasJoinedToThatSpellingGivesTheAlbumBack() throws {
        var choices = try apply(.keepApart(artist: "The Beatles", album: "Abbey Road (2019 Mix)"), to: []).choices
        choices = try apply(.join(artist: "The Beatles", album: "Abbey Road", toArtist: "The Beatles", toAlbum: "Abbey Road (2019 Mix)"),
                            to: choices).choices
        let spelled = AlbumFolding.spellingKey(artist: "The Beatles", album: "Abbey Road (2019 Mix)")
        let joined = AlbumFolding(foldsEditions: true, choices: choices)
        #expect(key(joined, "The Beatles", "Abbey Road (Remastered)") == AlbumFolding.apartPrefix + spelled)
        let (after, _) = try apply(.undo(.apart, key: spelled), to: choices)
        #expect(after.isEmpty, "\(after)")
        let folding = AlbumFolding(foldsEditions: true, choices: after)
        #expect(key(folding, "The Beatles", "Abbey Road (2019 Mix)") == key(.editions, "The Beatles", "Abbey Road"))
        #expect(key(folding, "The Beatles", "Abbey Road") == key(.editions, "The Beatles", "Abbey Road"))
    }

    /// A join to an album that is itself joined is named as the album it
    /// reaches, and stays so when the other join is undone.
    @Test func aJoinToAJoinedAlbumIsNamedAsTheAlbumItReaches() throws {
        var choices = try apply(.join(artist: "A", album: "Y", toArtist: "A", toAlbum: "Z"), to: []).choices
        choices = try apply(.join(artist: "A", album: "X", toArtist: "A", toAlbum: "Y"), to: choices).choices
        #expect(choices.last?.targetAlbum == "Z")
        choices = try apply(.undo(.join, key: key(.editions, "A", "Y")), to: choices).choices
        #expect(choices.map(\.album) == ["X"])
        #expect(choices[0].targetAlbum == "Z")
        #expect(AlbumFolding(foldsEditions: true, choices: choices).folded(.album, artist: "A", name: "X").key == key(.editions, "A", "Z"))
    }

    /// A choice pointed elsewhere by a later one is dated by it, so that
    /// making the choices again in the order of their dates (an import)
    /// gives the same grouping.
    @Test func choicesMadeAgainInTheirOrderGiveTheSameGrouping() throws {
        var choices: [AlbumChoice] = []
        let steps: [AlbumChoiceChange] = [
            .join(artist: "The Who", album: "Live at Leeds (Deluxe)", toArtist: "The Who", toAlbum: "Leeds Demos"),
            .keepApart(artist: "The Who", album: "Tommy (Deluxe)"),
            .join(artist: "The Who", album: "Leeds Demos", toArtist: "The Who", toAlbum: "Tommy (Deluxe)"),
            .join(artist: "The Who", album: "Quadrophenia", toArtist: "The Who", toAlbum: "Tommy"),
        ]
        for (n, step) in steps.enumerated() {
            choices = try #require(step.applied(to: choices, at: Self.now.addingTimeInterval(Double(n)))).choices
        }
        let replayed = choices.sorted { $0.madeAt < $1.madeAt }.reduce(into: [AlbumChoice]()) { made, choice in
            let change: AlbumChoiceChange = choice.kind == .apart
                ? .keepApart(artist: choice.artist, album: choice.album)
                : .join(artist: choice.artist, album: choice.album, toArtist: choice.targetArtist!, toAlbum: choice.targetAlbum!)
            made = change.applied(to: made, at: choice.madeAt)?.choices ?? made
        }
        let original = AlbumFolding(foldsEditions: true, choices: choices), again = AlbumFolding(foldsEditions: true, choices: replayed)
        #expect(again.keptApart == original.keptApart)
        #expect(again.joined == original.joined)
    }

    /// A kept-apart spelling's key is not any album's: an artist whose
    /// name begins with "=" keeps theirs.
    @Test func aKeptApartKeyIsNoAlbumsKey() throws {
        let choices = try apply(.keepApart(artist: "Foo", album: "Bar"), to: []).choices
        let folding = AlbumFolding(foldsEditions: true, choices: choices)
        #expect(key(folding, "Foo", "Bar") != key(folding, "=Foo", "Bar"))
    }
}

