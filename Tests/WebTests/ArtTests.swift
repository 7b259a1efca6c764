import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VinylogueCore

@Suite struct ArtTests {
    @Test func coversRedirectToOurOwnCachedCopy() async throws {
        // Over HTTP, as `serve` reaches Last.fm and its image host.
        try await Harness.run(fakes: .servers) { harness, client in
            let cover = try await client.get("/u/ybsc/cover/Paramore/Paramore")
            #expect(cover.status == .found)
            #expect(cover.headers[.location] == "/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png")
            let image = try await client.get("/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png")
            #expect(image.status == .ok)
            #expect(image.headers[.contentType] == "image/png")
            #expect(image.headers[.cacheControl]?.contains("immutable") == true)
            _ = try await client.get("/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png")
            #expect(await harness.fake.imagesServed() == ["bebe11f4ddf3dee473b26c7e2d5c9ff6.png"])  // fetched once
        }
    }

    @Test(arguments: ["/art/300x300/..%2F..%2Fetc%2Fpasswd", "/art/300x300/nothex0000000000000000000000000.png",
                      "/art/9999x9999/bebe11f4ddf3dee473b26c7e2d5c9ff6.png", "/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.svg",
                      "/art/https:%2F%2Fevil.example/x.png"])
    func theImageRouteCannotBeAimedElsewhere(path: String) async throws {
        try await Harness.run { harness, client in
            let response = try await client.get(path)
            #expect(response.status == .notFound)
            #expect(await harness.fake.imagesServed().isEmpty)
        }
    }

    @Test func theAlbumPageIsColouredByItsArt() async throws {
        try await Harness.run { harness, client in
            _ = try await client.get("/u/ybsc/album/Paramore/Paramore?week=2020-07-08")
            // The colours are kept once worked out, however long the first
            // visit waited for them.
            await harness.idle()
            let page = try await client.get("/u/ybsc/album/Paramore/Paramore?week=2020-07-08")
            #expect(page.body.contains("src=\"/art/300x300/bebe11f4ddf3dee473b26c7e2d5c9ff6.png\""))
            let theme = try #require(page.body.range(of: #"/theme/[0-9a-f]{6}/[0-9a-f]{6}/[0-9a-f]{6}\.css"#, options: .regularExpression))
            let css = try await client.get(String(page.body[theme]))
            #expect(css.status == .ok)
            #expect(css.body.hasPrefix(":root { --album-bg: #"))
            let bad = try await client.get("/theme/zzzzzz/000000/ffffff.css")
            #expect(bad.status == .notFound)
        }
    }

    @Test func demoCoversAreGeneratedOffline() async throws {
        try await Harness.run(demo: true) { harness, client in
            let cover = try await client.get("/u/demo/cover/Paper%20Orchard/Southern%20Harbor")
            let location = try #require(cover.headers[.location])
            #expect(location.hasPrefix("/art/demo/"))
            let image = try await client.get(location)
            #expect(image.status == .ok && image.headers[.contentType] == "image/png")
            #expect(await harness.fake.imagesServed().isEmpty)
            #expect(await harness.fake.requests().isEmpty)
        }
    }
}
