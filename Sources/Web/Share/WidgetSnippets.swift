import HTTPServing
import Mustache
import VinylogueCore

/// The code a person pastes into their own page to show their widget: a
/// frame of `/u/{user}/widget`, or the PNG as a picture linking to the
/// chart. Absolute, from the server's public address (the code runs on
/// other sites). Shown as text (escaped) on the chart page and in Settings.
struct WidgetSnippets {
    /// `<iframe src="…/u/{user}/widget" …>`.
    let frame: String
    /// `<a href="…/u/{user}"><img src="…/u/{user}/widget.png" …></a>`.
    let image: String
    /// The SVG form, for those who prefer it.
    let svgURL: String

    init(user: Username, yearsAgo: Int = 1, base: String) {
        func url(_ path: String) -> String { XMLText.escaped(base + path) }
        let title = XMLText.escaped("\(user.value): this week, years ago")
        frame = "<iframe src=\"\(url(Paths.widget(user, yearsAgo: yearsAgo)))\" width=\"300\" height=\"420\" style=\"border:0\" "
            + "loading=\"lazy\" title=\"\(title)\"></iframe>"
        image = "<a href=\"\(url(Paths.chart(user, yearsAgo: yearsAgo)))\"><img src=\"\(url(Paths.widget(user, yearsAgo: yearsAgo, format: "png")))\" "
            + "width=\"300\" height=\"400\" alt=\"\(title)\"></a>"
        svgURL = base + Paths.widget(user, yearsAgo: yearsAgo, format: "svg")
    }
}

extension WidgetSnippets: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "frame": frame
        case "image": image
        case "svgURL": svgURL
        default: nil
        }
    }
}
