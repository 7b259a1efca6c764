import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// `/u/{user}/feed.atom`: "this week, one year ago", a new entry each week
/// (`FeedPage`). `?years_ago=N` makes it N years instead.
struct FeedRoutes: Sendable {
    typealias Context = WebRequestContext

    let sources: ListeningSources
    let viewers: Viewers
    let clock: WallClock
    /// Where the feed's links point.
    let address: PublicAddress
    /// How many recent weeks the feed carries.
    static var weeks: Int { 4 }

    /// `people` is the group of `/u/{user}`.
    func register(people: RouterGroup<Context>) {
        people.get("feed.atom") { request, context in try await self.feed(request, context) }
    }

    func feed(_ request: Request, _ context: Context) async throws -> Response {
        let person = try context.requiredPerson(), user = person.name
        var yearsAgo = 1
        if let n = request.uri.queryParameters.get("years_ago") {
            guard let years = Int(n), (1...100).contains(years) else {
                throw PageError.badRequest("years_ago must be a whole number of years from 1 to 100.")
            }
            yearsAgo = years
        }
        let settings = await viewers.settings(for: context)
        let asked = FeedPage.Request(user: user, yearsAgo: yearsAgo, filter: settings.filter, weeks: Self.weeks,
                                     timeZone: settings.timeZone)
        let source = await sources.concealing(person.concealment).charts(for: user), now = clock.now
        // This week's anniversaries and rituals, for an archived person: the newest entry carries them.
        let archive = (source as? ArchiveChartSource)?.store, zone = settings.timeZone
        async let found = archive == nil ? nil : try? await archive?.anniversaries(of: user, now: now, timeZone: zone)
        // A saved copy is served as it is: a feed has nowhere to say so.
        let feed = await FeedPage.load(asked, from: source, now: now)
        if let failure = feed.failure {
            return APIResponse.error(status: HTTPResponse.Status(for: failure), message: failure.forVisitors)
        }
        let labels = WeekLabels(timeZone: settings.timeZone)
        let query = yearsAgo == 1 ? "" : "?years_ago=\(yearsAgo)"
        let base = address.base
        let moments = Self.lines(await found, user: user)
        let entries = feed.entries.enumerated().map { n, entry in
            AtomEntry(id: "tag:vinylogue,2025:\(user.key):\(entry.week.from)", title: entry.title,
                      url: base + Paths.week(user, day: labels.permalinkDay(of: entry.week)), updated: entry.published,
                      summary: n == 0 && !moments.isEmpty ? entry.summary + "\n\n" + moments.joined(separator: "\n") : entry.summary)
        }
        let xml = AtomFeed(id: "tag:vinylogue,2025:\(user.key)\(yearsAgo == 1 ? "" : ":\(yearsAgo)")", title: "Vinylogue: \(feed.title)",
                           selfURL: base + Paths.feed(user) + query, siteURL: base + Paths.chart(user, yearsAgo: yearsAgo),
                           updated: feed.updated, entries: entries).xml
        return Response(status: .ok, headers: [.contentType: "application/atom+xml; charset=utf-8", .cacheControl: "max-age=3600"],
                        body: .init(byteBuffer: ByteBuffer(string: xml)))
    }
}

extension FeedRoutes {
    /// This week's anniversaries and rituals, a sentence each.
    static func lines(_ found: Anniversaries?, user: Username) -> [String] {
        guard let found else { return [] }
        return found.milestones.map(Anniversaries.sentence) + found.rituals.map { found.sentence($0, whose: CopyProgressNote.possessive(user)) }
    }
}

/// One feed entry.
struct AtomEntry {
    let id: String
    let title: String
    let url: String
    let updated: Date
    let summary: String
}

/// An Atom 1.0 document; every piece of text is XML-escaped.
struct AtomFeed {
    let id: String
    let title: String
    let selfURL: String
    let siteURL: String
    let updated: Date
    let entries: [AtomEntry]

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // Characters XML 1.0 forbids are dropped.
                if c.value == 0x9 || c.value == 0xA || c.value == 0xD || (c.value >= 0x20 && c.value != 0xFFFE && c.value != 0xFFFF) {
                    out.unicodeScalars.append(c)
                }
            }
        }
        return out
    }

    static func date(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = .gmt
        return f.string(from: d)
    }

    var xml: String {
        var x = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n"
        x += "  <id>\(Self.escape(id))</id>\n  <title>\(Self.escape(title))</title>\n  <updated>\(Self.date(updated))</updated>\n"
        x += "  <link rel=\"self\" href=\"\(Self.escape(selfURL))\"/>\n  <link href=\"\(Self.escape(siteURL))\"/>\n"
        x += "  <author><name>Vinylogue</name></author>\n"
        for e in entries {
            x += "  <entry>\n    <id>\(Self.escape(e.id))</id>\n    <title>\(Self.escape(e.title))</title>\n"
            x += "    <updated>\(Self.date(e.updated))</updated>\n    <link href=\"\(Self.escape(e.url))\"/>\n"
            x += "    <summary type=\"text\">\(Self.escape(e.summary))</summary>\n  </entry>\n"
        }
        return x + "</feed>\n"
    }
}
