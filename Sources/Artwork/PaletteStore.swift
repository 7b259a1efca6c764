import Foundation
import VinylogueCore

/// Album palettes shared by every instance of a fleet: computed once by
/// whichever instance first loads a cover, then found by the others
/// without fetching or decoding the image. `PostgresPaletteStore` plays it;
/// a single instance needs none (its palettes sit beside its images on disk).
public protocol PaletteStore: Sendable {
    /// The palette stored for the image at `address`, if any.
    func palette(for address: ArtworkAddress) async -> AlbumColours?
    /// Keeps `palette` for `address`. Failing to is not an error anyone
    /// sees: the palette is computed again when next needed.
    func store(_ palette: AlbumColours, for address: ArtworkAddress) async
}
