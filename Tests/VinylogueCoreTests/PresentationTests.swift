import Foundation
import Testing
import VinylogueCore

@Suite struct WeekLabelTests {
    let labels = WeekLabels(timeZone: .gmt)

    @Test func labelsTheCapturedWeekAsTheAppDid() {
        #expect(labels.label(for: ChartWeek(from: 1_593_950_400, to: 1_594_555_200)) == "Week 28 · Jul 5 – 12, 2020")
    }

    @Test func labelsWeeksAcrossMonthsAndYears() {
        #expect(labels.range(of: ChartWeek(from: 1_593_345_600, to: 1_593_950_400)) == "Jun 28 – Jul 5, 2020")
        #expect(labels.range(of: ChartWeek(from: 1_609_070_400, to: 1_609_675_200)) == "Dec 27, 2020 – Jan 3, 2021")
    }

    @Test func parsesPermalinkDates() throws {
        let date = try #require(labels.parseDay("2020-07-08"))
        #expect(labels.isoDay(date) == "2020-07-08")
        #expect(labels.parseDay("2020-02-30") == nil)
        #expect(labels.parseDay("2020-7-8") == nil)
        #expect(labels.parseDay("yesterday") == nil)
        #expect(labels.parseDay("2021-02-29") == nil)
        #expect(labels.parseDay("2020-02-29") != nil)
    }

    @Test func countsPlaysAndYears() {
        #expect(WeekLabels.plays(1) == "1 play")
        #expect(WeekLabels.plays(12) == "12 plays")
        #expect(WeekLabels.yearsAgo(1) == "1 year ago")
        #expect(WeekLabels.yearsAgo(3) == "3 years ago")
    }
}

@Suite struct ScrobbleTallyTests {
    let user = try! Username("tester")
    let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)

    func scrobble(_ t: Int64, _ artist: String, _ album: String, _ track: String = "x") -> Scrobble {
        Scrobble(instant: week.from + t, artist: artist, album: album, track: track)
    }

    @Test func groupsCaseInsensitivelyAndRanksByPlays() {
        let scrobbles = [
            scrobble(0, "PUP", "Morbid Stuff"), scrobble(10, "pup", "morbid stuff"), scrobble(20, "PUP", "Morbid Stuff"),
            scrobble(30, "Paramore", "Paramore"), scrobble(40, "Paramore", "Paramore"),
            scrobble(50, "Nada Surf", "Let Go"),
            scrobble(60, "Nobody", ""),  // no album: not in an album chart
            scrobble(-1, "Before", "The Week"), scrobble(604_800, "After", "The Week"),
        ]
        let chart = ScrobbleTally.chart(.album, user: user, week: week, scrobbles: scrobbles)
        #expect(chart.entries.map(\.name) == ["Morbid Stuff", "Paramore", "Let Go"])
        #expect(chart.entries.map(\.plays) == [3, 2, 1])
        #expect(chart.entries.map(\.rank) == [1, 2, 3])
        #expect(chart.entries[0].artist == "PUP")  // the most played spelling

        let artists = ScrobbleTally.chart(.artist, user: user, week: week, scrobbles: scrobbles)
        #expect(artists.entries.map(\.artist) == ["PUP", "Paramore", "Nada Surf", "Nobody"])

        let tracks = ScrobbleTally.chart(.track, user: user, week: week, scrobbles: [scrobble(0, "A", "B", "Song"), scrobble(1, "a", "C", "SONG")])
        #expect(tracks.entries.count == 1 && tracks.entries[0].plays == 2)
    }

    @Test func tiesAreOrderedByArtistThenName() {
        let chart = ScrobbleTally.chart(.album, user: user, week: week, scrobbles: [scrobble(0, "b", "x"), scrobble(1, "A", "z"), scrobble(2, "a", "y")])
        #expect(chart.entries.map(\.name) == ["y", "z", "x"])
    }
}

@Suite struct WikiTextTests {
    @Test func cleansTheCapturedParamoreSummary() throws {
        let html = #"Paramore is the band's self-titled fourth studio album. Williams explained "The self-titled aspect" <a href="http://www.last.fm/music/Paramore/Paramore">Read more on Last.fm</a>."#
        let text = try #require(WikiText.parse(html: html))
        #expect(text.plainText == #"Paramore is the band's self-titled fourth studio album. Williams explained "The self-titled aspect""#)
    }

    @Test func keepsOnlyAllowListedMarkupAndSafeLinks() throws {
        let html = #"<p>One <b>bold</b> <i>move</i> <a href="https://example.com/a?b=1&amp;c=2">ok</a> <a href="javascript:alert(1)">bad</a> <a href=" JAVASCRIPT:x">also</a></p><script>alert(1)</script><img src=x onerror=alert(2)><p>Two &amp; &lt;three&gt; &#39;q&#39;</p>User-contributed text is available under the Creative Commons By-SA License."#
        let text = try #require(WikiText.parse(html: html))
        #expect(text.paragraphs.count == 2)
        #expect(text.paragraphs[0].contains(.strong("bold")))
        #expect(text.paragraphs[0].contains(.emphasis("move")))
        #expect(text.paragraphs[0].contains(.link(text: "ok", href: "https://example.com/a?b=1&c=2")))
        #expect(text.paragraphs[0].contains(.text("bad")))
        #expect(!text.plainText.contains("alert"))
        #expect(text.paragraphs[1] == [.text("Two & <three> 'q'")])
    }

    @Test func emptyOrMarkupOnlyWikisAreNil() {
        #expect(WikiText.parse(html: "") == nil)
        #expect(WikiText.parse(html: #"<a href="https://www.last.fm/x">Read more on Last.fm</a>"#) == nil)
        #expect(WikiText.parse(html: "<script>only</script>") == nil)
    }
}

@Suite struct PlayCountFilterTests {
    @Test func hidesRowsAtOrUnderTheThreshold() {
        let entries = [1, 2, 3, 8].enumerated().map { ChartEntry(rank: $0.offset + 1, artist: "a", name: "n\($0.offset)", plays: $0.element) }
        #expect(PlayCountFilter.off.apply(entries).count == 4)
        #expect(PlayCountFilter(threshold: 1).apply(entries).map(\.plays) == [2, 3, 8])
        #expect(PlayCountFilter(threshold: 2).apply(entries).map(\.plays) == [3, 8])
        #expect(PlayCountFilter(threshold: 8).apply(entries).isEmpty)
        #expect(PlayCountFilter(threshold: -5).isOff)
    }
}
