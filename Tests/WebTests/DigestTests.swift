import Foundation
import Workers
@testable import HTTPServing
import Hummingbird
import HummingbirdTesting
@testable import ListenIngest
import Mail
import Synchronization
import TestSupport
import Testing
import VinylogueCore
@testable import Web
import ZIPFoundation

/// A mail server in this process: keeps what it is given, in order, and
/// can be told to refuse.
final class MailRecorder: MailDelivery {
    private let state = Mutex<(sent: [MailMessage], attempts: Int, refusal: MailFailure?, waiters: [CheckedContinuation<Void, Never>])>(([], 0, nil, []))

    /// From now on, refuse every message with `failure` (nil: take them again).
    func refuse(with failure: MailFailure?) { state.withLock { $0.refusal = failure } }

    var sent: [MailMessage] { state.withLock { $0.sent } }

    func send(_ message: MailMessage) async throws(MailFailure) {
        let (waiters, refusal) = state.withLock { state -> ([CheckedContinuation<Void, Never>], MailFailure?) in
            state.attempts += 1
            if state.refusal == nil { state.sent.append(message) }
            defer { state.waiters = [] }
            return (state.waiters, state.refusal)
        }
        for waiter in waiters { waiter.resume() }
        if let refusal { throw refusal }
    }

    /// Waits until `count` messages were taken, for at most 10 s; returns them.
    func waitFor(_ count: Int) async throws -> [MailMessage] {
        try await waitUntil("\(count) emails") { $0.sent.count >= count }
        return sent
    }

    /// Waits until `count` sends were tried (taken or refused), for at most 10 s.
    func waitForAttempts(_ count: Int) async throws {
        try await waitUntil("\(count) tries") { $0.attempts >= count }
    }

    private func waitUntil(_ what: String, _ done: @escaping @Sendable ((sent: [MailMessage], attempts: Int, refusal: MailFailure?,
                                                                        waiters: [CheckedContinuation<Void, Never>])) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let (finished, seen) = state.withLock { (done($0), $0.attempts) }
            if finished { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("\(what) were expected within 10 s; \(seen) tries came")
                throw CancellationError()
            }
            // Woken by the next message, or after a second to look again at the deadline.
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await withCheckedContinuation { continuation in
                        let late = self.state.withLock { state -> Bool in
                            if state.attempts > seen { return true }
                            state.waiters.append(continuation)
                            return false
                        }
                        if late { continuation.resume() }
                    }
                }
                group.addTask { try? await Task.sleep(for: .seconds(1)) }
                await group.next()
                group.cancelAll()
                // The waiter is resumed by the next message at the latest.
                self.state.withLock { state in
                    for waiter in state.waiters { waiter.resume() }
                    state.waiters = []
                }
                await group.waitForAll()
            }
        }
    }
}

extension MailMessage {
    /// The message as a mail server receives it.
    var wire: String { String(decoding: rendered(), as: UTF8.self) }
}

/// The weekly digest through the web app: an address confirmed by the
/// link of the email it gets, the digest on its day and hour in the
/// person's zone, "send it now", the one-click unsubscribe, and failures
/// shown on Settings. The mail server is a recorder in this process (the
/// protocol suite sends through a real one).
@Suite struct DigestTests {
    static let address = "demo-listener@example.org"

    /// Saves the household's zone as UTC, then the digest for Saturday
    /// 09:00 (the test clock's day and hour), and opens the confirmation
    /// link it is sent; returns the session.
    static func subscribe(_ client: some TestClientProtocol, _ mail: MailRecorder, years: Int = 3) async throws -> Session {
        let session = try await client.session()
        _ = try await client.post("/settings", ["filter": "0", "timezone": "UTC"], session: session)
        let saved = try await client.post("/settings/digest", ["action": "save", "address": address, "weekday": "7", "hour": "9",
                                                               "years": String(years)], session: session)
        #expect(saved.status == .seeOther && saved.headers[.location] == "/settings?digest=confirm#digest")
        let confirmation = try #require(try await mail.waitFor(1).last)
        #expect(confirmation.to.description == address && confirmation.subject == "Confirm your Vinylogue digest")
        let link = try #require(confirmation.text.firstMatch(of: /http:\/\/[^\s]+(\/digest\/confirm\?token=[0-9a-f]{64})/)?.1)
        let confirmed = try await confirm(client, String(link))
        #expect(confirmed.status == .ok && confirmed.body.contains("Your weekly digest is on"))
        return session
    }

    /// Opens a confirmation link as a person does: the page, then its button.
    static func confirm(_ client: some TestClientProtocol, _ link: String) async throws -> (status: HTTPResponse.Status, body: String) {
        let page = try await client.get(link)
        guard page.status == .ok, page.body.contains("Confirm this address") else { return (page.status, page.body) }
        let done = try await client.execute(uri: link, method: .post, headers: [:], body: nil)
        return (done.status, String(buffer: done.body))
    }

    @Test func anAddressIsConfirmedThenTheDigestComesOnItsDayAndHour() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { _, client in
            let session = try await client.session()
            let before = try await client.get("/settings", session: session)
            #expect(before.body.contains("This week, years ago, by email") && before.body.contains("Off. Give an address"))
            _ = try await Self.subscribe(client, mail)
            // Saturday 09:00 UTC is now: this week's digest goes out once.
            let digest = try #require(try await mail.waitFor(2).last)
            #expect(digest.subject.hasPrefix("This week a year ago: "))
            #expect(digest.text.contains("A year ago · Week") && digest.text.contains("http://127.0.0.1:8080/u/demo/week/"))
            #expect(digest.text.contains("Unsubscribe: http://127.0.0.1:8080/digest/unsubscribe?token="))
            let html = try #require(digest.html)
            #expect(!html.contains("<script") && html.contains("src=\"cid:cover-1@vinylogue\""))
            #expect(html.contains("href=\"http://127.0.0.1:8080/u/demo/album/"))
            // The demo's anniversaries and rituals of this week, before the years.
            #expect(digest.text.containsInOrder(["This week in the history:", "demo’s early-July album: ", "A year ago · Week"]), "\(digest.text)")
            #expect(html.contains("This week in the history"))
            // Each week of an archived person's, to play again.
            #expect(digest.text.contains("  Play it again: http://127.0.0.1:8080/u/demo/playlist/1\n"), "\(digest.text)")
            #expect(html.contains("<a href=\"http://127.0.0.1:8080/u/demo/playlist/2\" style=\"color:#6b665c;\">Play it again</a>"))
            #expect(!digest.inlineImages.isEmpty && digest.inlineImages.allSatisfy { $0.contentType.hasPrefix("image/") })
            let headers = digest.extraHeaders.reduce(into: [String: String]()) { $0[$1.name] = $1.value }
            #expect(headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click")
            #expect(headers["List-Unsubscribe"]?.hasPrefix("<http://127.0.0.1:8080/digest/unsubscribe?token=") == true)
            // Every year shown is within the three asked for.
            #expect(!digest.text.contains("4 years ago") && !digest.text.contains("5 years ago"))
            let settings = try await client.get("/settings", session: session)
            #expect(settings.body.contains("On: the next one goes to \(Self.address) on Saturday 15 July at 09:00"))
            // The download of everything carries the address and schedule, not the link's token.
            let download = try await client.execute(uri: "/settings/export", method: .get, headers: [.cookie: session.cookie], body: nil)
            let dir = try TemporaryDirectory()
            let file = dir.url.appendingPathComponent("export.zip")
            try Data(buffer: download.body).write(to: file)
            let zip = try Archive(url: file, accessMode: .read)
            let entry = try #require(zip["vinylogue/settings.json"])
            var json = Data()
            _ = try zip.extract(entry) { json.append($0) }
            let written = String(decoding: json, as: UTF8.self)
            #expect(written.contains(#""weekly_digest":{"address":"demo-listener@example.org","weekday":7,"hour":9,"years":3,"confirmed":true}"#),
                    "\(written)")
            #expect(!written.contains("token"))
            #expect(settings.body.contains("Weekly digest · 8 Jul, 09:00 · sent"))
            // The schedule looks again each time the sender wakes: the week's digest went once.
            _ = try await client.post("/settings/digest", ["action": "now"], session: session)
            let all = try await mail.waitFor(3)
            #expect(all.filter { $0.subject.hasPrefix("This week") }.count == 2)
            let after = try await client.get("/settings", session: session)
            #expect(after.body.components(separatedBy: "Weekly digest ·").count == 2)
        }
    }

    @Test func sendNowTheFilterAndTheOneClickUnsubscribe() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { harness, client in
            let session = try await Self.subscribe(client, mail, years: 1)
            let weekly = try #require(try await mail.waitFor(2).last)
            let now = try await client.post("/settings/digest", ["action": "now"], session: session)
            #expect(now.headers[.location] == "/settings?digest=now#digest")
            let sent = try #require(try await mail.waitFor(3).last)
            #expect(sent.subject == weekly.subject && sent.text == weekly.text)
            #expect(sent.messageID != weekly.messageID)
            func plays(_ text: String) -> [Int] { text.matches(of: /\((\d+) plays?\)/).compactMap { Int($0.1) } }
            #expect(plays(weekly.text).contains { $0 <= 8 } && plays(weekly.text).contains { $0 > 8 }, "\(weekly.text)")
            // The person's filter holds in the digest as on their pages: albums played 8 times or fewer go.
            _ = try await client.post("/settings", ["filter": "8", "timezone": "UTC"], session: session)
            harness.clock.advance(days: 1.0 / 1440)
            _ = try await client.post("/settings/digest", ["action": "now"], session: session)
            let filtered = try #require(try await mail.waitFor(4).last)
            #expect(!plays(filtered.text).isEmpty && plays(filtered.text).allSatisfy { $0 > 8 }, "\(filtered.text)")
            // A mail client's one-click POST: no cookie, no form token.
            let unsubscribe = try #require(sent.extraHeaders.first { $0.name == "List-Unsubscribe" }?.value)
            let path = String(unsubscribe.dropFirst("<http://127.0.0.1:8080".count).dropLast())
            let page = try await client.get(path)
            #expect(page.status == .ok && page.body.contains("Unsubscribe from the weekly digest") && page.body.contains(Self.address))
            let done = try await client.execute(uri: path, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                body: ByteBuffer(string: "List-Unsubscribe=One-Click"))
            #expect(done.status == .ok && String(buffer: done.body).contains("You are unsubscribed"))
            // Nothing more goes: not the weekly, not "now".
            let refused = try await client.post("/settings/digest", ["action": "now"], session: session)
            #expect(refused.headers[.location] == "/settings?digest=no-address#digest")
            let settings = try await client.get("/settings", session: session)
            #expect(settings.body.contains("Off. Give an address"))
            // The link again: already off, said kindly.
            let twice = try await client.execute(uri: path, method: .post, headers: [:], body: nil)
            #expect(twice.status == .ok && String(buffer: twice.body).contains("Nothing is sent to this address"))
            #expect(mail.sent.count == 4)
        }
    }

    @Test func aRefusalIsShownWithTheServersWordsAndTriedAgain() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { harness, client in
            let session = try await Self.subscribe(client, mail)
            _ = try await mail.waitFor(2)
            mail.refuse(with: .refused(during: .recipient, code: 451, reply: "4.3.0 Mailbox busy, try later"))
            _ = try await client.post("/settings/digest", ["action": "now"], session: session)
            _ = try await mail.waitForAttempts(3)
            let busy = try await Self.settings(client, session, saying: "will be tried again")
            #expect(busy.contains("Digest sent on request · 8 Jul, 09:01 · will be tried again"))
            #expect(busy.contains("The mail server refused the recipient: 451 4.3.0 Mailbox busy, try later"))
            // A minute later the server refuses for good: the retry and a new one fail at once, with its words.
            harness.clock.advance(days: 2.0 / 1440)
            mail.refuse(with: .refused(during: .recipient, code: 550, reply: "5.1.1 No such user"))
            _ = try await client.post("/settings/digest", ["action": "now"], session: session)
            _ = try await mail.waitForAttempts(5)
            let failed = try await Self.settings(client, session, saying: "· failed")
            #expect(failed.components(separatedBy: "· failed").count == 3)
            #expect(failed.contains("The mail server refused the recipient: 550 5.1.1 No such user"))
            #expect(mail.sent.count == 2)
        }
    }

    /// Settings, read again (50 ms apart, for 10 s at most) until it says
    /// `text`: the outcome is written just after the mail server answered.
    static func settings(_ client: some TestClientProtocol, _ session: Session, saying text: String) async throws -> String {
        var page = try await client.get("/settings", session: session).body
        for _ in 0..<200 where !page.contains(text) {
            try await Task.sleep(for: .milliseconds(50))
            page = try await client.get("/settings", session: session).body
        }
        return page
    }

    @Test func aChangedAddressGetsItsOwnConfirmationAndTheOldLinkDies() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { _, client in
            let session = try await client.session()
            // Both in the same minute: each address gets its link.
            for (count, address) in ["first@example.org", "second@example.org"].enumerated() {
                _ = try await client.post("/settings/digest", ["action": "save", "address": address, "weekday": "2", "hour": "8", "years": "3"],
                                          session: session)
                _ = try await mail.waitFor(count + 1)
            }
            let sent = mail.sent
            #expect(sent.map(\.to.description) == ["first@example.org", "second@example.org"])
            let links = try sent.map { try #require($0.text.firstMatch(of: /(\/digest\/confirm\?token=[0-9a-f]{64})/)?.1) }
            let old = try await Self.confirm(client, String(links[0]))
            #expect(old.status == .notFound && old.body.contains("This link no longer works"))
            let current = try await Self.confirm(client, String(links[1]))
            #expect(current.status == .ok && current.body.contains("The first one goes to second@example.org on Monday 10 July at 08:00"))
            // "Send the link again" twice in a minute sends one.
            _ = try await client.post("/settings/digest", ["action": "save", "address": "third@example.org", "weekday": "2", "hour": "8",
                                                           "years": "3"], session: session)
            _ = try await mail.waitFor(3)
            for _ in 0..<2 { _ = try await client.post("/settings/digest", ["action": "again"], session: session) }
            let page = try await Self.settings(client, session, saying: "Confirmation link")
            #expect(page.components(separatedBy: "Confirmation link ·").count == 4)
        }
    }

    @Test func aWeekWithNothingToShowSendsNothing() async throws {
        let mail = MailRecorder()
        try await Harness.run(mail: mail) { _, client in
            // ybsc's captured history has July 2020 and nothing in July 2022.
            let session = try await client.session()
            _ = try await client.post("/users", ["username": "ybsc"], session: session)
            _ = try await client.post("/settings", ["filter": "0", "timezone": "UTC"], session: session)
            _ = try await client.post("/settings/digest", ["action": "save", "address": Self.address, "weekday": "7", "hour": "9", "years": "1"],
                                      session: session)
            let confirmation = try #require(try await mail.waitFor(1).first)
            let link = try #require(confirmation.text.firstMatch(of: /(\/digest\/confirm\?token=[0-9a-f]{64})/)?.1)
            #expect(try await Self.confirm(client, String(link)).status == .ok)
            // Saturday 09:00 has come: the week's digest is looked at, and not sent.
            let page = try await Self.settings(client, session, saying: "Weekly digest · 8 Jul, 09:00 · not sent")
            #expect(page.contains("Weekly digest · 8 Jul, 09:00 · not sent"))
            #expect(page.contains("Nothing to show: there were no albums this week a year ago."))
            // Three years back reaches July 2020: then there is something to send.
            _ = try await client.post("/settings/digest", ["action": "save", "address": Self.address, "weekday": "7", "hour": "9", "years": "3"],
                                      session: session)
            _ = try await client.post("/settings/digest", ["action": "now"], session: session)
            let digest = try #require(try await mail.waitFor(2).last)
            #expect(digest.subject.hasPrefix("This week 3 years ago: ") && digest.text.contains("What ybsc was listening to"))
            #expect(!digest.text.contains("A year ago") && !digest.text.contains("2 years ago"))
        }
    }

    /// Found by a hostile review: the link acted on GET and HEAD, so a mail
    /// scanner that opens links confirmed an address nobody had asked for.
    @Test func openingTheLinkConfirmsNothingUntilItsButton() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { _, client in
            let session = try await client.session()
            _ = try await client.post("/settings/digest", ["action": "save", "address": Self.address, "weekday": "2", "hour": "8", "years": "3"],
                                      session: session)
            let confirmation = try #require(try await mail.waitFor(1).first)
            let link = String(try #require(confirmation.text.firstMatch(of: /(\/digest\/confirm\?token=[0-9a-f]{64})/)?.1))
            let head = try await client.execute(uri: link, method: .head, headers: [:], body: nil)
            let page = try await client.get(link)
            #expect(head.status == .ok && page.status == .ok && page.body.contains("Weekly digests of this week, years ago, will go to"))
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(try await client.get("/settings", session: session).body.contains("Waiting for you to confirm \(Self.address)"))
            let done = try await client.execute(uri: link, method: .post, headers: [:], body: nil)
            #expect(String(buffer: done.body).contains("Your weekly digest is on"))
            #expect(try await client.get(link).body.contains("This address is confirmed already"))
        }
    }

    /// Found by a hostile review: saving address after address sent a
    /// confirmation to each, without end.
    @Test func confirmationsAreFewAnHour() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { harness, client in
            let session = try await client.session()
            for n in 1...5 {
                let saved = try await client.post("/settings/digest", ["action": "save", "address": "victim\(n)@example.org", "weekday": "2",
                                                                       "hour": "8", "years": "3"], session: session)
                #expect(saved.headers[.location] == (n <= 3 ? "/settings?digest=confirm#digest" : "/settings?digest=too-many#digest"))
                if n <= 3 { _ = try await mail.waitFor(n) }
            }
            let again = try await client.post("/settings/digest", ["action": "again"], session: session)
            #expect(again.headers[.location] == "/settings?digest=too-many#digest")
            #expect(try await client.get("/settings?digest=too-many", session: session).body.contains("No link was sent"))
            // An hour later the last address can be sent its link.
            harness.clock.advance(days: 61.0 / 1440)
            let later = try await client.post("/settings/digest", ["action": "again"], session: session)
            #expect(later.headers[.location] == "/settings?digest=confirm#digest")
            let sent = try await mail.waitFor(4)
            // Past the limit no address is changed: the one waiting for its link is still the third.
            #expect(sent.map(\.to.description) == ["victim1@example.org", "victim2@example.org", "victim3@example.org", "victim3@example.org"])
        }
    }

    /// Issue 38: past the limit, a new address replaced a confirmed one
    /// without a link, and the digests stopped. The confirmed address is
    /// kept, and Settings says no link was sent and when to ask again.
    @Test func pastTheLimitAConfirmedAddressIsKept() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { harness, client in
            let session = try await client.session()
            _ = try await client.post("/settings", ["filter": "0", "timezone": "Europe/Berlin"], session: session)
            func save(_ address: String) async throws -> String? {
                try await client.post("/settings/digest", ["action": "save", "address": address, "weekday": "2", "hour": "8", "years": "3"],
                                      session: session).headers[.location]
            }
            for n in 1...3 {
                #expect(try await save("b\(n)@example.com") == "/settings?digest=confirm#digest")
                let link = try #require(try await mail.waitFor(n).last?.text.firstMatch(of: /(\/digest\/confirm\?token=[0-9a-f]{64})/)?.1)
                let confirmed = try await client.execute(uri: String(link), method: .post, headers: [:], body: nil)
                #expect(String(buffer: confirmed.body).contains("Your weekly digest is on"))
                harness.clock.advance(days: 10.0 / 1440)
            }
            // 09:30 UTC: the first link went at 09:00, so the next may go at 10:00 UTC, 12:00 in Berlin.
            #expect(try await save("b4@example.com") == "/settings?digest=too-many#digest")
            let settings = try await client.get("/settings?digest=too-many", session: session).body
            #expect(settings.contains("On: the next one goes to b3@example.com"), "\(settings)")
            #expect(!settings.contains("Waiting for you to confirm"))
            #expect(settings.contains("No link was sent, and the address was not changed") && settings.contains("Digests still go to b3@example.com"),
                    "\(settings)")
            #expect(settings.contains("after 12:00"), "\(settings)")
            // Asked again at the time it said, the link goes.
            harness.clock.advance(days: 40.0 / 1440)
            #expect(try await save("b4@example.com") == "/settings?digest=confirm#digest")
            #expect(try await mail.waitFor(4).map(\.to.description).last == "b4@example.com")
        }
    }

    /// With accounts, each person has their own digest of their own listening,
    /// hidden from others or not; a visitor has none.
    @Test func eachAccountHasItsOwnDigest() async throws {
        let mail = MailRecorder()
        try await Harness.run(signIn: true, mail: mail) { harness, client in
            let visitor = try await client.get("/settings")
            #expect(!visitor.body.contains("digest-address"))
            let rj = try await SignInTests.signIn(client, harness, as: "rj")
            _ = try await client.post("/settings/visibility", ["visibility": "only-me"], session: rj.form)
            let saved = try await client.post("/settings/digest", ["action": "save", "address": "rj@example.org", "weekday": "2", "hour": "8",
                                                                   "years": "3"], session: rj.form)
            #expect(saved.headers[.location] == "/settings?digest=confirm#digest")
            let confirmation = try #require(try await mail.waitFor(1).first)
            #expect(confirmation.text.contains("send RJ's weekly digest to this address"))
            let link = String(try #require(confirmation.text.firstMatch(of: /(\/digest\/confirm\?token=[0-9a-f]{64})/)?.1))
            // Confirmed from a browser that is signed in as nobody: the link is enough.
            #expect(try await Self.confirm(client, link).body.contains("Your weekly digest is on"))
            _ = try await client.post("/settings/digest", ["action": "now"], session: rj.form)
            let digest = try #require(try await mail.waitFor(2).last)
            #expect(digest.to.description == "rj@example.org" && digest.text.contains("What RJ was listening to"))
            #expect(digest.text.contains("http://127.0.0.1:8080/u/RJ/week/") && !digest.inlineImages.isEmpty)
            // Another account sees none of it, and has its own.
            let other = try await SignInTests.signIn(client, harness, as: "ybsc")
            let theirs = try await client.execute(uri: "/settings", method: .get, headers: [.cookie: other.cookie], body: nil)
            #expect(String(buffer: theirs.body).contains("Off. Give an address") && !String(buffer: theirs.body).contains("rj@example.org"))
            let mine = try await client.execute(uri: "/settings", method: .get, headers: [.cookie: rj.cookie], body: nil)
            #expect(String(buffer: mine.body).contains("On: the next one goes to rj@example.org"))
        }
    }

    /// Found by a hostile review: players may send names with line breaks,
    /// which forged lines (a false "Unsubscribe:") in the text part.
    @Test func aNameCannotForgeALineOfTheTextPart() {
        let forged = DigestWriter.oneLine("Album\r\nUnsubscribe: http://evil.example\u{2028}and\u{85}more\u{0}")
        #expect(!forged.contains(where: \.isNewline) && !forged.unicodeScalars.contains { $0.value < 32 })
        #expect(forged == "Album  Unsubscribe: http://evil.example and more ")
    }

    @Test func badInputIsSaidAndNothingIsKept() async throws {
        let mail = MailRecorder()
        try await Harness.run(demo: true, mail: mail) { _, client in
            let session = try await client.session()
            for (fields, outcome) in [
                (["action": "save", "address": "not an address", "weekday": "2", "hour": "8", "years": "3"], "bad-address"),
                (["action": "save", "address": "a@b.org\r\nBcc: x@y.org", "weekday": "2", "hour": "8", "years": "3"], "bad-address"),
                (["action": "save", "address": "a@example.org", "weekday": "9", "hour": "8", "years": "3"], "bad-schedule"),
                (["action": "save", "address": "a@example.org", "weekday": "2", "hour": "24", "years": "3"], "bad-schedule"),
                (["action": "save", "address": "a@example.org", "weekday": "2", "hour": "8", "years": "11"], "bad-schedule"),
                (["action": "now"], "no-address"),
                (["action": "again"], "no-address"),
                (["action": "explode"], "unknown"),
            ] {
                let answer = try await client.post("/settings/digest", fields, session: session)
                #expect(answer.headers[.location] == "/settings?digest=\(outcome)#digest", "\(fields)")
            }
            let page = try await client.get("/settings?digest=bad-address", session: session)
            #expect(page.body.contains("That is not an email address Vinylogue can send to"))
            // Without the form's token nothing changes.
            let forged = try await client.post("/settings/digest", ["action": "save", "address": "a@example.org", "weekday": "2", "hour": "8",
                                                                    "years": "3"], session: session, token: "forged")
            #expect(forged.status == .forbidden)
            // Links that are not ours.
            for link in ["/digest/confirm?token=abc", "/digest/confirm?token=" + String(repeating: "0", count: 64),
                         "/digest/unsubscribe?token=<script>"] {
                let answer = try await client.get(link)
                #expect(answer.status == .notFound && answer.body.contains("This link no longer works"), "\(link)")
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(mail.sent.isEmpty)
        }
    }

    @Test func withoutAMailServerSettingsSaysWhy() async throws {
        try await Harness.run(demo: true) { _, client in
            let settings = try await client.get("/settings")
            #expect(settings.body.contains("This server cannot send email"))
            #expect(!settings.body.contains("digest-address"))
            let session = try await client.session()
            let post = try await client.post("/settings/digest", ["action": "now"], session: session)
            #expect(post.status == .notFound)
        }
    }
}
