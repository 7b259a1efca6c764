import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Stores
import TestSupport
import Testing
import VinylogueCore

/// Settings' "Delete my account": confirmed by typing the name, it leaves
/// nothing of the account and ends its session; unconfirmed, nothing goes.
@Suite struct AccountDeletionTests {
    static func post(_ client: some TestClientProtocol, _ browser: SignInTests.Browser, confirm: String) async throws -> TestResponse {
        let body = "csrf=\(browser.csrf.token)&confirm=\(confirm)"
        return try await client.execute(uri: "/settings/delete-account", method: .post,
                                        headers: [.cookie: browser.cookie, .contentType: "application/x-www-form-urlencoded"],
                                        body: ByteBuffer(string: body))
    }

    @Test func aConfirmedDeletionLeavesNothingAndEndsTheSession() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let rj = try Username("RJ")
            let archive = SQLiteScrobbleStore(database: harness.database)
            _ = try await archive.store([Scrobble(instant: 1_688_000_000, artist: "Low", album: "HEY WHAT", track: "White Horses")], of: rj, origin: .received)
            let browser = try await SignInTests.signIn(client, harness, as: "rj")
            let settings = try await SignInTests.page(client, "/settings", browser)
            #expect(settings.body.contains("Delete my account") && settings.body.contains("action=\"/settings/delete-account\""))

            // A wrong name deletes nothing and says why.
            let wrong = try await Self.post(client, browser, confirm: "someone")
            #expect(wrong.status == .seeOther)
            #expect(wrong.headers[.location] == "/settings?delete=unconfirmed#delete")
            #expect(try await archive.scrobbleCount(of: rj) == 1)
            let told = try await SignInTests.page(client, "/settings?delete=unconfirmed", browser)
            #expect(told.body.contains("Nothing was deleted: type your Last.fm name, RJ, to confirm."))

            let deleted = try await Self.post(client, browser, confirm: "rj")
            #expect(deleted.status == .ok)
            #expect(String(buffer: deleted.body).contains("Your account is deleted"))
            #expect(deleted.headers[values: .setCookie].contains { $0.hasPrefix("vinylogue_session=;") || $0.contains("Max-Age=0") })
            #expect(try await archive.scrobbleCount(of: rj) == 0)
            #expect(try await SQLiteAccountStore(harness.database).accountCount() == 0)
            // The old session is no one's now.
            let after = try await SignInTests.page(client, "/settings", browser)
            #expect(after.status == .unauthorized || after.status == .forbidden, "\(after.status)")
        }
    }

    /// The share cards and widget drawn of the account's pages are files
    /// in the data directory: they go with the account; another person's stay.
    @Test func aDeletedAccountsCardsAndWidgetLeaveTheDisk() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let archive = SQLiteScrobbleStore(database: harness.database)
            let played = Scrobble(instant: Int64(july2023.timeIntervalSince1970) - 365 * 86_400, artist: "Low", album: "HEY WHAT",
                                  track: "White Horses")
            _ = try await archive.store([played], of: try Username("RJ"), origin: .received)
            _ = try await archive.store([played], of: try Username("ybsc"), origin: .received)
            let browser = try await SignInTests.signIn(client, harness, as: "rj")
            for path in ["/u/RJ/card.png", "/u/RJ/history/card.png", "/u/RJ/widget.png", "/u/ybsc/card.png"] {
                let drawn = try await SignInTests.page(client, path, browser)
                #expect(drawn.status == .ok, "\(path): \(drawn.status)")
            }
            let cards = harness.dataDirectory.appendingPathComponent("cards")
            func files() -> [String] {
                (FileManager.default.enumerator(atPath: cards.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".png") }
            }
            #expect(files().count == 4, "\(files())")

            #expect(try await Self.post(client, browser, confirm: "rj").status == .ok)
            #expect(files().count == 1, "left on disk: \(files())")
        }
    }

    @Test func aDeletionNeedsTheFormsCSRFTokenAndAnAccount() async throws {
        try await Harness.run(signIn: true) { harness, client in
            let browser = try await SignInTests.signIn(client, harness, as: "rj")
            let forged = try await client.execute(uri: "/settings/delete-account", method: .post,
                                                  headers: [.cookie: browser.cookie, .contentType: "application/x-www-form-urlencoded"],
                                                  body: ByteBuffer(string: "confirm=rj"))
            #expect(forged.status == .forbidden)
            #expect(try await SQLiteAccountStore(harness.database).accountCount() == 1)
        }
    }
}
