/// The colours an album page is painted with: a background taken from the
/// cover and two text colours that stay readable on it (WCAG AA, ≥ 4.5:1).
public struct AlbumColours: Sendable, Hashable, Codable {
    public let background: RGB
    /// For titles and body text.
    public let text: RGB
    /// A softer colour for labels and metadata; still ≥ 4.5:1 on `background`.
    public let secondaryText: RGB
    /// True when the cover could not be read and these are the house colours.
    public let isFallback: Bool

    public init(background: RGB, text: RGB, secondaryText: RGB, isFallback: Bool = false) {
        self.background = background
        self.text = text
        self.secondaryText = secondaryText
        self.isFallback = isFallback
    }

    /// The house palette, for covers that are missing or undecodable.
    public static var fallback: AlbumColours {
        ColourExtraction().palette(background: RGB(red: 0x2a, green: 0x2a, blue: 0x30), isFallback: true)
    }
}
