import HTTPServing
import VinylogueCore

/// What `everyone.mustache` reads: an `EveryoneThisWeekPage` turned into
/// strings and links.
struct EveryonePageView {
    /// One person's card.
    struct Card {
        let name: String
        /// The person's chart page for the same week (N years ago).
        let chartURL: String
        let covers: [Cover]
        let hasCovers: Bool
        let top: Top?
        let emptyText: String?
        /// Why this person's chart could not be shown, for a visitor.
        let errorText: String?
    }

    struct Cover {
        let artURL: String
        /// "Album by Artist"
        let alt: String
    }

    /// The person's #1 album.
    struct Top {
        let artist: String
        let name: String
        let playsLabel: String
        let albumURL: String
    }

    struct YearLink {
        let label: String
        let url: String
        let enabled: Bool
    }

    var layout: LayoutFields
    let yearsAgoLabel: String
    let weekLabel: String
    let previous: YearLink
    let next: YearLink
    let cards: [Card]
    let emptyText: String?
    let usersURL = Paths.home
    var staleNote: String?

    init(_ page: EveryoneThisWeekPage, labels: WeekLabels) {
        layout = LayoutFields(title: "Everyone · \(page.yearsAgoLabel)", csrf: "", bodyClass: "everyone-page")
        yearsAgoLabel = page.yearsAgoLabel
        weekLabel = page.weekLabel
        func link(_ step: EveryoneThisWeekPage.YearStep) -> YearLink {
            YearLink(label: step.label, url: Paths.everyone(yearsAgo: step.yearsAgo), enabled: step.isEnabled)
        }
        previous = link(page.previous)
        next = link(page.next)
        let yearsAgo = page.yearsAgo
        cards = page.people.map { person in
            let user = person.user
            let day = person.chart.week.map(labels.permalinkDay(of:))
            let covers = person.topRows.map {
                Cover(artURL: Paths.cover(user, artist: $0.artist, name: $0.name, mbid: $0.entry.mbid), alt: "\($0.name) by \($0.artist)")
            }
            return Card(name: user.value, chartURL: Paths.chart(user, yearsAgo: yearsAgo), covers: covers, hasCovers: !covers.isEmpty,
                        top: person.top.map {
                            Top(artist: $0.artist, name: $0.name, playsLabel: $0.playsLabel,
                                albumURL: Paths.album(user, artist: $0.artist, name: $0.name, day: day))
                        },
                        emptyText: person.failure == nil ? person.emptyText : nil, errorText: person.failure?.forVisitors)
        }
        emptyText = page.emptyText
    }
}
