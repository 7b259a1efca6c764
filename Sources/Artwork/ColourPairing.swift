/// The two colour schemes a page is shown in (CSS `prefers-color-scheme`).
public enum ColourScheme: String, Sendable, CaseIterable {
    case light, dark
}

/// One colour of text drawn on one background somewhere a palette is used,
/// and the contrast WCAG 2.x asks of it: 4.5:1 for body text, 3:1 for large
/// text (24 px, or 18.66 px bold, and up).
public struct ColourPairing: Sendable, Hashable, CustomStringConvertible {
    /// Where on the page this text is, for a failing test to say.
    public let place: String
    /// The text's colour as the browser draws it (after any opacity).
    public let text: RGB
    public let background: RGB
    public let isLargeText: Bool

    public init(place: String, text: RGB, background: RGB, isLargeText: Bool = false) {
        self.place = place
        self.text = text
        self.background = background
        self.isLargeText = isLargeText
    }

    public var contrast: Double { contrastRatio(text, background) }

    /// WCAG 2.x AA: 4.5:1, or 3:1 for large text.
    public var minimumContrast: Double { isLargeText ? 3 : ColourExtraction.minimumContrast }

    public var isReadable: Bool { contrast >= minimumContrast }

    public var description: String {
        "\(place): \(text) on \(background), \((contrast * 100).rounded() / 100):1"
    }
}

extension AlbumColours {
    /// Every place the album page draws text in or on these colours (the
    /// `body.album-theme` rules of vinylogue.css and the `/theme/` sheet),
    /// in `scheme`. A rule added there belongs here too: this list is what
    /// the palette tests check.
    ///
    /// The pairs are the same in both schemes: no album-theme rule uses a
    /// house colour that changes with the scheme (notices once sat on the
    /// house card colour, white in light mode, under the palette's text).
    public func pairings(in scheme: ColourScheme) -> [ColourPairing] {
        [
            ColourPairing(place: "album title", text: text, background: background, isLargeText: true),
            ColourPairing(place: "body text, figures, links, notices, navigation under the pointer", text: text, background: background),
            ColourPairing(place: "labels, artist, back link, navigation, tags, year labels, figure caption",
                          text: secondaryText, background: background),
            ColourPairing(place: "buttons", text: background, background: text),
        ]
    }
}
