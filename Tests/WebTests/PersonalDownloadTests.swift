import Foundation
import HummingbirdTesting
import SQLiteStore
import Stores
import TestSupport
import Testing
import VinylogueCore
import ZIPFoundation

/// Settings' "Download everything": the viewer's own ZIP, streamed; a
/// visitor gets none.
@Suite struct PersonalDownloadTests {
    @Test func anAccountDownloadsItsOwnListensListAndSettings() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try Username("RJ"), other = try Username("someone")
            let archive = SQLiteScrobbleStore(database: harness.database)
            _ = try await archive.store([Scrobble(instant: 1_688_000_000, artist: "Low", album: "HEY WHAT", track: "White Horses")], of: rj, origin: .received)
            _ = try await archive.store([Scrobble(instant: 1_688_000_000, artist: "Not", album: "Mine", track: "Theirs")], of: other, origin: .received)
            let browser = try await SignInTests.signIn(client, harness, as: "rj")
            try await VisibilityTests.choose(client, .friends, browser)
            let settings = try await SignInTests.page(client, "/settings", browser)
            #expect(settings.body.contains("Take it all with you") && settings.body.contains("href=\"/settings/export\""), "\(settings.body)")

            let response = try await client.execute(uri: "/settings/export", method: .get, headers: [.cookie: browser.cookie], body: nil)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/zip")
            #expect(response.headers[.contentDisposition] == "attachment; filename=\"vinylogue-RJ-2023-07-08.zip\"")
            #expect(response.headers[.cacheControl] == "no-store")
            let dir = try TemporaryDirectory()
            let file = dir.url.appendingPathComponent("export.zip")
            try Data(buffer: response.body).write(to: file)
            let zip = try Archive(url: file, accessMode: .read)
            var members: [String: String] = [:]
            for entry in zip {
                var data = Data()
                _ = try zip.extract(entry) { data.append($0) }
                members[entry.path] = String(decoding: data, as: UTF8.self)
            }
            #expect(members["listens/2023/6.jsonl"]?.contains("White Horses") == true, "\(members.keys.sorted())")
            #expect(!members.values.joined().contains("Theirs"))
            #expect(members["vinylogue/list.json"]?.contains("\"name\":\"RJ\"") == true, "\(members["vinylogue/list.json"] ?? "")")
            #expect(members["vinylogue/settings.json"]?.contains("\"visibility\":\"friends\"") == true, "\(members["vinylogue/settings.json"] ?? "")")
        }
    }

    @Test func aVisitorIsAskedToSignIn() async throws {
        try await Harness.run(signIn: true) { _, client in
            let response = try await client.execute(uri: "/settings/export", method: .get, headers: [:], body: nil)
            #expect(response.status == .unauthorized || response.status == .forbidden, "\(response.status)")
            #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(String(buffer: response.body).contains("Sign in with Last.fm to download your listening."))
        }
    }
}
