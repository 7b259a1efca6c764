import Foundation
import VinylogueCore

/// How a person's album choices travel in their "Download everything" ZIP
/// (`vinylogue/albums.json`), and back in with `vinylogue import`: the
/// switch, and each choice about a single album by the names the person
/// saw (its keys are made again on import, by the rule of the Vinylogue
/// that imports it).
///
///     {"editions_as_one":true,"choices":[
///       {"kind":"apart","artist":"…","album":"…","made_at":1790000000},
///       {"kind":"join","artist":"…","album":"…","same_as":{"artist":"…","album":"…"},"made_at":…}]}
public enum AlbumFoldingMember {
    public static let path = "vinylogue/albums.json"
    /// Larger than any such member: a damaged or foreign one is not read.
    public static let largest = 4 << 20

    public static func json(_ folding: AlbumFolding, choices: [AlbumChoice] = []) -> String {
        var text = "{\"editions_as_one\":\(folding.foldsEditions)"
        if !choices.isEmpty {
            text += ",\"choices\":[" + choices.map { choice in
                var item = "{\"kind\":\(JSONText.string(choice.kind.rawValue)),\"artist\":\(JSONText.string(choice.artist)),"
                    + "\"album\":\(JSONText.string(choice.album))"
                if choice.kind == .join, let artist = choice.targetArtist, let album = choice.targetAlbum {
                    item += ",\"same_as\":{\"artist\":\(JSONText.string(artist)),\"album\":\(JSONText.string(album))}"
                }
                return item + ",\"made_at\":\(Int64(choice.madeAt.timeIntervalSince1970))}"
            }.joined(separator: ",") + "]"
        }
        return text + "}\n"
    }

    /// The switch a member holds; nil when it is not one (damaged, or
    /// larger than such a member ever is).
    public static func folding(from bytes: [UInt8]) -> AlbumFolding? {
        guard let object = object(bytes), let editions = object["editions_as_one"] as? Bool else { return nil }
        return AlbumFolding(foldsEditions: editions)
    }

    /// The choices a member holds, as changes to make again in the order
    /// they were made (those it cannot read are left out).
    public static func changes(from bytes: [UInt8]) -> [AlbumChoiceChange] {
        guard let items = object(bytes)?["choices"] as? [[String: Any]] else { return [] }
        let sorted = items.enumerated().sorted { a, b in
            let x = (a.element["made_at"] as? NSNumber)?.doubleValue ?? 0, y = (b.element["made_at"] as? NSNumber)?.doubleValue ?? 0
            return x != y ? x < y : a.offset < b.offset
        }
        return sorted.compactMap { _, item in
            guard let artist = item["artist"] as? String, let album = item["album"] as? String, !album.isEmpty else { return nil }
            switch item["kind"] as? String {
            case "apart": return .keepApart(artist: artist, album: album)
            case "join":
                guard let target = item["same_as"] as? [String: Any], let toArtist = target["artist"] as? String,
                      let toAlbum = target["album"] as? String, !toAlbum.isEmpty else { return nil }
                return .join(artist: artist, album: album, toArtist: toArtist, toAlbum: toAlbum)
            default: return nil
            }
        }
    }

    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        guard bytes.count <= largest else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }
}
