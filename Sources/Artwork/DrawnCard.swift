import Foundation
import VinylogueCore

/// A picture the server draws itself from texts and covers: a share card
/// (`ShareCard`) or a sidebar widget (`WidgetCard`). `ShareCardStore`
/// fetches its covers, draws it on NIO's blocking pool and keeps the PNG.
///
/// The value holds only what is drawn, so its `key` names the image: the
/// same value always gives the same pixels, and anything that changes the
/// picture changes the key.
public protocol DrawnCard: Sendable {
    /// 32 hex digits naming this picture (its file name on disk); each kind
    /// of card puts its own name among the hashed fields, so two kinds
    /// never share a key.
    var key: String { get }
    /// The covers drawn, in drawing order; nil where a place shows no
    /// cover (a record is drawn there, and nothing is missing).
    var drawnCovers: [ArtworkAddress?] { get }
    /// The largest side a cover is drawn at: covers are decoded to it.
    static var coverSide: Int { get }
    /// Draws the card. `images[i]` is the decoded cover of
    /// `drawnCovers[i]`, or nil when there is none or it could not be had.
    func render(images: [PixelGrid?]) -> PixelGrid
}

extension PixelCanvas {
    /// A record on a tile in the house colours: what stands in for a cover
    /// a card does not have.
    mutating func drawRecord(x: Int, y: Int, side: Int) {
        typealias Palette = ShareCard.Palette
        fill(x: x, y: y, width: side, height: side, with: Palette.tile)
        let cx = x + side / 2, cy = y + side / 2, r = side * 2 / 5
        fillDisc(cx: cx, cy: cy, r: r, with: Palette.background)
        for groove in stride(from: r * 9 / 10, to: r * 4 / 10, by: -max(3, r / 9)) {
            fillDisc(cx: cx, cy: cy, r: groove, with: Palette.groove)
            fillDisc(cx: cx, cy: cy, r: groove - max(1, r / 60), with: Palette.background)
        }
        fillDisc(cx: cx, cy: cy, r: r * 3 / 10, with: Palette.accent)
        fillDisc(cx: cx, cy: cy, r: max(2, r / 25), with: Palette.background)
    }
}
