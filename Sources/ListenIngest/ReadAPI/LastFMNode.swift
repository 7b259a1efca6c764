import Foundation

/// One element of a Last.fm API answer, written in either of Last.fm's
/// shapes from the same value, as Last.fm writes them:
///
/// - XML: `<album rank="1"><artist mbid="…">PUP</artist>…</album>`.
/// - JSON: an element with text and no children is a string, or, with
///   attributes, an object of the attributes and `#text`
///   (`"artist": {"mbid": "…", "#text": "PUP"}`, `"chart": {"#text": "",
///   "from": "…", "to": "…"}`); an element with children is an object of
///   them, its attributes under `@attr`; children of one name are a list,
///   or one object when there is one (Last.fm's quirk), or `[]` when a list
///   is empty.
package struct LastFMNode: Sendable {
    package let name: String
    package var attributes: [(String, String)] = []
    package var text: String?
    package var children: [LastFMNode] = []
    /// Names of children that are lists, even when empty.
    package var lists: [String] = []

    package init(_ name: String, attributes: [(String, String)] = [], text: String? = nil) {
        self.name = name
        self.attributes = attributes
        self.text = text
    }

    package init(_ name: String, attributes: [(String, String)] = [], lists: [String] = [], children: [LastFMNode]) {
        self.name = name
        self.attributes = attributes
        self.lists = lists
        self.children = children
    }

    /// Last.fm's four image sizes, empty (the archive keeps no art addresses).
    package static func images(_ urls: (String) -> String = { _ in "" }) -> [LastFMNode] {
        ["small", "medium", "large", "extralarge"].map { LastFMNode("image", attributes: [("size", $0)], text: urls($0)) }
    }

    // MARK: XML

    package var xml: String {
        var out = "<" + name
        for (key, value) in attributes { out += " \(key)=\"\(LastFMAnswer.escaped(value))\"" }
        if children.isEmpty {
            guard let text, !text.isEmpty else { return out + "/>" }
            return out + ">" + LastFMAnswer.escaped(text) + "</\(name)>"
        }
        return out + ">" + children.map(\.xml).joined() + "</\(name)>"
    }

    // MARK: JSON

    package var json: Any {
        if children.isEmpty && lists.isEmpty {
            guard !attributes.isEmpty else { return text ?? "" }
            var object: [String: Any] = ["#text": text ?? ""]
            for (key, value) in attributes { object[key] = value }
            return object
        }
        var object: [String: Any] = [:]
        var order: [String] = []
        var grouped: [String: [Any]] = [:]
        for child in children {
            if grouped[child.name] == nil { order.append(child.name) }
            grouped[child.name, default: []].append(child.json)
        }
        for name in order {
            let values = grouped[name] ?? []
            object[name] = values.count == 1 ? values[0] : values
        }
        for list in lists where grouped[list] == nil { object[list] = [Any]() }
        if !attributes.isEmpty { object["@attr"] = Dictionary(attributes, uniquingKeysWith: { first, _ in first }) }
        return object
    }
}
