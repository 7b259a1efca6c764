import Foundation
import VinylogueCore

// Lenient building blocks for Last.fm's JSON, which sends numbers as
// strings (sometimes as numbers), single objects where a list has one
// element, and "" where an object or list is empty. Internal to this module.

/// A string that may arrive as a JSON string or number.
struct LenientString: Decodable, Sendable {
    let value: String
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { value = ""; return }
        if let s = try? c.decode(String.self) { value = s; return }
        if let i = try? c.decode(Int64.self) { value = String(i); return }
        if let d = try? c.decode(Double.self) { value = String(d); return }
        if let b = try? c.decode(Bool.self) { value = b ? "1" : "0"; return }
        throw DecodingError.typeMismatch(String.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string or a number"))
    }
}

/// An integer that may arrive as "123", 123, "" or be missing.
struct LenientInt: Decodable, Sendable {
    let value: Int
    init(from decoder: any Decoder) throws {
        let raw = try LenientString(from: decoder).value.trimmingCharacters(in: .whitespaces)
        if raw.isEmpty { value = 0; return }
        if let i = Int(raw) { value = i; return }
        if let d = Double(raw), d.isFinite { value = Int(d); return }
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "“\(raw)” is not a number"))
    }
}

/// A list that may arrive as an array, a single object, "" or nothing.
struct OneOrMany<Element: Decodable & Sendable>: Decodable, Sendable {
    let items: [Element]
    init(items: [Element]) { self.items = items }
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { items = []; return }
        if let many = try? c.decode([Element].self) { items = many; return }
        if let text = try? c.decode(String.self), text.trimmingCharacters(in: .whitespaces).isEmpty { items = []; return }
        items = [try c.decode(Element.self)]
    }
}

/// `{"#text": "...", ...}` objects, or a bare string.
struct TextNode: Decodable, Sendable {
    let text: String
    let mbid: String?
    enum CodingKeys: String, CodingKey { case text = "#text", mbid, name }
    init(from decoder: any Decoder) throws {
        // Almost always an object, so that is tried first: a failed try is
        // a thrown error, and a page of recent tracks holds two such nodes
        // per scrobble (trying the plain forms first threw ten errors a
        // scrobble, half a million for a 50,000-scrobble copy).
        if let c = try? decoder.container(keyedBy: CodingKeys.self) {
            let text = try c.decodeIfPresent(LenientString.self, forKey: .text)?.value
            let name = try c.decodeIfPresent(LenientString.self, forKey: .name)?.value
            self.text = text ?? name ?? ""
            mbid = try c.decodeIfPresent(LenientString.self, forKey: .mbid)?.value
            return
        }
        text = try LenientString(from: decoder).value
        mbid = nil
    }
}

/// `{"#text": "https://...", "size": "small"}`
struct RawImage: Decodable, Sendable {
    let url: String
    let size: String
    enum CodingKeys: String, CodingKey { case url = "#text", size }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decodeIfPresent(LenientString.self, forKey: .url)?.value ?? ""
        size = try c.decodeIfPresent(LenientString.self, forKey: .size)?.value ?? ""
    }

    /// Non-empty URLs by known size; the unnamed size is ignored.
    static func bySize(_ images: [RawImage]) -> [ImageSize: String] {
        var result: [ImageSize: String] = [:]
        for image in images where !image.url.isEmpty {
            if let size = ImageSize(rawValue: image.size) { result[size] = image.url }
        }
        return result
    }
}

/// `{"rank": "1"}` and similar attribute objects.
struct RankAttr: Decodable, Sendable {
    let rank: LenientInt?
}

/// Paging attributes shared by list responses.
struct PageAttr: Decodable, Sendable {
    let page: LenientInt?
    let totalPages: LenientInt?
    let total: LenientInt?
    let user: LenientString?
    let from: LenientString?
    let to: LenientString?
}

/// Last.fm's error body: `{"error": 6, "message": "User not found"}`.
struct RawError: Decodable, Sendable {
    let error: LenientInt
    let message: LenientString?
}
