/// The only way to name an album image in Vinylogue.
///
/// An address is three allow-listed parts (size, 32-hex hash, extension), so
/// it can be built from untrusted input (a Last.fm response, a request path)
/// and turned back into an upstream URL without any way to make the server
/// fetch an arbitrary host, path or file. Parsing is done by hand on purpose:
/// `URL` / `URLComponents` accept userinfo, ports, percent-escapes and
/// relative segments that we would then have to think about.
public struct ArtworkAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The image sizes Last.fm serves under `/i/u/{size}/`, plus our own
    /// namespace for generated demo covers.
    public enum Size: String, Sendable, Hashable, Codable, CaseIterable {
        case small = "34s"
        case medium = "64s"
        case large = "174s"
        case extraLarge = "300x300"
        case mega = "770x0"
        /// Last.fm's "original upload" size.
        case original = "ar0"
        /// A cover drawn by `GeneratedCover`; never fetched from anywhere.
        case demo
    }

    /// File extensions Last.fm uses. The extension is part of the upstream
    /// name only: what the bytes are is always decided by sniffing them.
    public enum Extension: String, Sendable, Hashable, Codable, CaseIterable {
        case png, jpg, jpeg, gif, webp
    }

    public let size: Size
    /// 32 lowercase hex digits.
    public let hash: String
    public let ext: Extension

    /// Where Last.fm serves images today.
    public static let lastFMImageBase = "https://lastfm.freetls.fastly.net/i/u/"

    /// Hosts Last.fm has used for `/i/u/` image URLs over the years.
    static let acceptedHosts: Set<String> = [
        "lastfm.freetls.fastly.net", "lastfm-img2.akamaized.net", "userserve-ak.last.fm",
    ]

    /// Builds an address from parts, validating each one.
    public init?(size: Size, hash: String, ext: Extension) {
        guard Self.isHash(hash) else { return nil }
        // Generated covers are always PNG: one name per cover, no aliases.
        if size == .demo && ext != .png { return nil }
        self.size = size
        self.hash = hash
        self.ext = ext
    }

    /// Parses a Last.fm image URL such as
    /// `https://lastfm.freetls.fastly.net/i/u/300x300/<hash>.png`.
    /// Anything with another host, a port, userinfo, a query, a fragment,
    /// escapes or extra path segments is refused.
    public init?(lastFMURL string: String) {
        let lowered = string.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = string.dropFirst("https://".count)
        } else if lowered.hasPrefix("http://") {
            rest = string.dropFirst("http://".count)
        } else {
            return nil
        }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        // Host names are case-insensitive; the path is not.
        let host = rest[..<slash].lowercased()
        guard Self.acceptedHosts.contains(host) else { return nil }
        let path = rest[slash...]
        guard path.hasPrefix("/i/u/") else { return nil }
        let parts = path.dropFirst("/i/u/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let size = Size(rawValue: String(parts[0])), size != .demo else { return nil }
        self.init(size: size, fileName: parts[1])
    }

    /// Parses the two components after `/art/` in our own route,
    /// e.g. `("300x300", "<hash>.png")`.
    public init?(routeSize: String, fileName: String) {
        guard let size = Size(rawValue: routeSize) else { return nil }
        self.init(size: size, fileName: Substring(fileName))
    }

    /// Parses our own route path, `/art/{size}/{hash}.{ext}`.
    public init?(localPath: String) {
        let parts = localPath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, parts[1] == "art" else { return nil }
        self.init(routeSize: String(parts[2]), fileName: String(parts[3]))
    }

    private init?(size: Size, fileName: Substring) {
        let pieces = fileName.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 2, let ext = Extension(rawValue: String(pieces[1])) else { return nil }
        self.init(size: size, hash: String(pieces[0]), ext: ext)
    }

    /// The path of this image in our own web app.
    public var localPath: String { "/art/\(size.rawValue)/\(hash).\(ext.rawValue)" }

    /// `<hash>.<ext>`, safe as a file name because every part is allow-listed.
    public var fileName: String { "\(hash).\(ext.rawValue)" }

    /// Whether this names a generated cover rather than a Last.fm image.
    public var isGenerated: Bool { size == .demo }

    /// The upstream URL under `imageBase` (which must end in `/`), or nil for
    /// generated covers, which have no upstream.
    public func upstreamURL(imageBase: String = ArtworkAddress.lastFMImageBase) -> String? {
        guard !isGenerated else { return nil }
        let base = imageBase.hasSuffix("/") ? imageBase : imageBase + "/"
        return "\(base)\(size.rawValue)/\(hash).\(ext.rawValue)"
    }

    public var description: String { localPath }

    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    // Decoding goes through the same validation as every other entry point.
    public init(from decoder: any Decoder) throws {
        let path = try decoder.singleValueContainer().decode(String.self)
        guard let address = ArtworkAddress(localPath: path) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an artwork path: \(path)"))
        }
        self = address
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(localPath)
    }
}
