import Foundation
import Testing
import VinylogueCore
@testable import Artwork

@Suite("ArtworkAddress")
struct ArtworkAddressTests {
    static let hash = "bebe11f4ddf3dee473b26c7e2d5c9ff6"

    /// The image URLs in the captured album.getInfo response.
    static func fixtureImageURLs() throws -> [String] {
        let file = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/LastFMTestServer/Fixtures/album.getinfo.json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        let images = (json["album"] as! [String: Any])["image"] as! [[String: Any]]
        return images.compactMap { $0["#text"] as? String }.filter { !$0.isEmpty }
    }

    @Test func acceptsTheFixtureURLs() throws {
        let urls = try Self.fixtureImageURLs()
        #expect(urls.count >= 4)
        for url in urls {
            let address = try #require(ArtworkAddress(lastFMURL: url), "\(url)")
            #expect(address.hash == Self.hash)
            #expect(address.ext == .png)
            // Rebuilding gives back exactly the URL we were given.
            #expect(address.upstreamURL() == url)
        }
        let large = try #require(ArtworkAddress(lastFMURL: urls.last!))
        #expect(large.size == .extraLarge)
        #expect(large.localPath == "/art/300x300/\(Self.hash).png")
    }

    @Test(arguments: [
        "https://lastfm-img2.akamaized.net/i/u/174s/\(hash).jpg",
        "http://userserve-ak.last.fm/i/u/64s/\(hash).gif",
        "HTTPS://LastFM.FreeTLS.Fastly.net/i/u/770x0/\(hash).webp",
        "https://lastfm.freetls.fastly.net/i/u/ar0/\(hash).jpeg",
    ])
    func acceptsOtherKnownHostsAndSizes(url: String) {
        #expect(ArtworkAddress(lastFMURL: url) != nil)
    }

    @Test(arguments: [
        "https://evil.com/i/u/300x300/\(hash).png",
        "https://lastfm.freetls.fastly.net.evil.com/i/u/300x300/\(hash).png",
        "https://lastfm.freetls.fastly.net@evil.com/i/u/300x300/\(hash).png",
        "https://user:pw@lastfm.freetls.fastly.net/i/u/300x300/\(hash).png",
        "https://lastfm.freetls.fastly.net:8080/i/u/300x300/\(hash).png",
        "javascript:alert(1)//lastfm.freetls.fastly.net/i/u/300x300/\(hash).png",
        "file:///etc/passwd",
        "file://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png",
        "ftp://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png",
        "//lastfm.freetls.fastly.net/i/u/300x300/\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/../../etc/passwd",
        "https://lastfm.freetls.fastly.net/i/u/300x300/../\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/%2e%2e/\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png?x=1",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png#frag",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash.uppercased()).png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash.dropLast()).png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash)0.png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash.dropLast())g.png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash).svg",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png.exe",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash)",
        "https://lastfm.freetls.fastly.net/i/u/999x999/\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/demo/\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/300x300//\(hash).png",
        "https://lastfm.freetls.fastly.net/x/i/u/300x300/\(hash).png",
        "https://lastfm.freetls.fastly.net/i/u/300x300/\(hash).png/",
        "https://lastfm.freetls.fastly.net\\@evil.com/i/u/300x300/\(hash).png",
        "",
        "not a url",
    ])
    func rejectsEverythingElse(url: String) {
        #expect(ArtworkAddress(lastFMURL: url) == nil)
    }

    @Test func routePathsRoundTrip() throws {
        let address = try #require(ArtworkAddress(localPath: "/art/174s/\(Self.hash).jpg"))
        #expect(address.size == .large && address.ext == .jpg)
        #expect(ArtworkAddress(localPath: address.localPath) == address)
        #expect(ArtworkAddress(routeSize: "174s", fileName: "\(Self.hash).jpg") == address)
        #expect(address.upstreamURL(imageBase: "http://127.0.0.1:9/img") == "http://127.0.0.1:9/img/174s/\(Self.hash).jpg")
    }

    @Test(arguments: [
        "/art/300x300/../../etc/passwd",
        "/art/300x300/\(hash).png/x",
        "art/300x300/\(hash).png",
        "/art/300x300/\(hash).png?x",
        "/img/300x300/\(hash).png",
        "/art/huge/\(hash).png",
        "/art/demo/\(hash).jpg",
        "/art/300x300/\(hash)",
        "/art/300x300/.\(hash).png",
    ])
    func rejectsBadRoutePaths(path: String) {
        #expect(ArtworkAddress(localPath: path) == nil)
    }

    @Test func demoAddressesHaveNoUpstream() throws {
        let address = try #require(ArtworkAddress(localPath: "/art/demo/\(Self.hash).png"))
        #expect(address.isGenerated)
        #expect(address.upstreamURL() == nil)
    }

    @Test func codableGoesThroughValidation() throws {
        let address = try #require(ArtworkAddress(lastFMURL: "https://lastfm.freetls.fastly.net/i/u/300x300/\(Self.hash).png"))
        let data = try JSONEncoder().encode([address])
        #expect(try JSONDecoder().decode([ArtworkAddress].self, from: data) == [address])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ArtworkAddress].self, from: Data(#"["/art/300x300/../x.png"]"#.utf8))
        }
    }
}
