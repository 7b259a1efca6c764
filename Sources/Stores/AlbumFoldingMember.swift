import Foundation
import VinylogueCore

/// How a person's album choice travels in their "Download everything" ZIP
/// (`vinylogue/albums.json`), and back in with `vinylogue import`.
public enum AlbumFoldingMember {
    public static let path = "vinylogue/albums.json"

    /// `{"editions_as_one":true}` and a newline.
    public static func json(_ folding: AlbumFolding) -> String {
        "{\"editions_as_one\":\(folding.foldsEditions)}\n"
    }

    /// The choice a member holds; nil when it is not one (damaged, or
    /// larger than such a member ever is).
    public static func folding(from bytes: [UInt8]) -> AlbumFolding? {
        guard bytes.count <= 4_096,
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let editions = object["editions_as_one"] as? Bool else { return nil }
        return AlbumFolding(foldsEditions: editions)
    }
}
