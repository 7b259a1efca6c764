import Foundation
@testable import HTTPServing
@testable import ListenIngest
import Testing
import VinylogueCore
@testable import Web

/// The views that name their fields for Mustache (`MustacheParent`, instead
/// of Mustache's reflection) name every stored property, each as itself:
/// a property added to a view and not to its `child(named:)` fails here.
@Suite struct MustacheFieldTests {
    /// `value` with an optional unwrapped, as Mustache's reflection gives it.
    static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value
    }

    /// Every stored property of `value` is what `child` names it.
    static func expectEveryFieldNamed(_ value: Any, by child: (String) -> Any?, sourceLocation: SourceLocation = #_sourceLocation) {
        let fields = Mirror(reflecting: value).children.compactMap { property in property.label.map { ($0, property.value) } }
        #expect(!fields.isEmpty, sourceLocation: sourceLocation)
        for (label, field) in fields {
            let named = child(label)
            #expect(named.map { String(describing: $0) } == unwrapped(field).map { String(describing: $0) },
                    "\(type(of: value)).\(label)", sourceLocation: sourceLocation)
        }
        #expect(child("noSuchField") == nil, sourceLocation: sourceLocation)
    }

    @Test(arguments: ChartKind.allCases) func chartPageViewsNameEveryField(kind: ChartKind) async throws {
        let now = Date(timeIntervalSince1970: 1_688_806_800)
        let source = DemoChartSource(clock: .fixed(now))
        let page = await WeeklyChartPage.load(.init(user: DemoHistory.username, kind: kind, selection: .yearsAgo(3), filter: .off),
                                              from: source, now: now)
        var view = ChartPageView(page, byDate: false, options: ChartQuery(kind: kind, minPlays: 1), selfURL: "/u/demo?years_ago=3",
                                 labels: WeekLabels(timeZone: .gmt))
        view.staleNote = "A note."
        view.layout.share = ShareLinks(base: "http://example.test", permalink: "/u/demo/week/2020-07-08", title: "T", description: "D")
        view.layout.themeURL = "/theme.css"
        view.widget = WidgetSnippets(user: DemoHistory.username, yearsAgo: 3, base: "http://example.test")
        Self.expectEveryFieldNamed(view, by: view.child(named:))
        Self.expectEveryFieldNamed(view.layout, by: view.layout.child(named:))
        Self.expectEveryFieldNamed(view.layout.links, by: view.layout.links.child(named:))
        let widget = try #require(view.widget)
        Self.expectEveryFieldNamed(widget, by: widget.child(named:))
        let share = try #require(view.layout.share)
        Self.expectEveryFieldNamed(share, by: share.child(named:))
        let row = try #require(view.rows.first)
        Self.expectEveryFieldNamed(row, by: row.child(named:))
        if kind != .album {
            let monogram = try #require(row.monogram)
            Self.expectEveryFieldNamed(monogram, by: monogram.child(named:))
        }
        let previous = try #require(view.previous)
        Self.expectEveryFieldNamed(previous, by: previous.child(named:))
        let kindLink = try #require(view.kinds.first)
        Self.expectEveryFieldNamed(kindLink, by: kindLink.child(named:))
        let choice = try #require(view.filterChoices.first)
        Self.expectEveryFieldNamed(choice, by: choice.child(named:))
        let field = ChartPageView.HiddenField(name: "kind", value: "artist")
        Self.expectEveryFieldNamed(field, by: field.child(named:))
    }
}
