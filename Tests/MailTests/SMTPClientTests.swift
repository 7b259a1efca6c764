import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import Mail

@Suite struct SMTPClientTests {
    static let quiet = Logger(label: "mail-tests", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Ample for a loaded run; the tests about timeouts give their own.
    static let short = SMTPTimeouts(connect: .seconds(9), command: .seconds(9), dataEnd: .seconds(9))

    let message = MailMessage(
        from: MailAddress("charts@vinylogue.test")!, fromName: "Vinylogue",
        to: MailAddress("listener@example.org")!, subject: "Your week in music — Björk",
        date: Date(timeIntervalSince1970: 1_772_528_700),
        text: "Hello.\n.\n..two dots\n.leading dot\nLast line",
        html: "<p>Hello.</p>\n.\n<p>Done</p>",
        extraHeaders: [("List-Unsubscribe", "<https://vinylogue.test/unsubscribe?token=abc>")]
    )

    func client(port: Int, host: String = "127.0.0.1", username: String? = nil, password: String? = nil,
                security: SMTPConfiguration.Security = .startTLSWhenOffered, trustRoots: String? = nil,
                timeouts: SMTPTimeouts = Self.short) -> SMTPClient {
        SMTPClient(
            configuration: SMTPConfiguration(
                host: host, port: port, username: username, password: password, security: security,
                trustRoots: trustRoots, heloName: "client.test"
            ),
            timeouts: timeouts, logger: Self.quiet
        )
    }

    /// The failure `send` ends in, or `nil` once it sent; 10 s at most.
    func sendFailure(_ message: MailMessage, with client: SMTPClient) async throws -> MailFailure? {
        try await withDeadline("send to finish", seconds: 10) {
            do throws(MailFailure) {
                try await client.send(message)
                return nil
            } catch {
                return error
            }
        }
    }

    @Test func sendsTheEnvelopeAndTheRenderedMessage() async throws {
        let message = self.message
        let transcript = try await FakeSMTPServer.with(FakeSMTPScript()) { server in
            let failure = try await sendFailure(message, with: client(port: server.port))
            #expect(failure == nil)
            return try await server.firstTranscript()
        }
        #expect(transcript.lines == [
            "EHLO client.test", "MAIL FROM:<charts@vinylogue.test>", "RCPT TO:<listener@example.org>", "DATA", "QUIT",
        ])
        #expect(transcript.messages == [message.rendered()])
        // The dot lines went out doubled, and only the terminator is a lone dot.
        let sent = String(decoding: transcript.allBytes, as: UTF8.self)
        #expect(sent.contains("\r\n..\r\n"))
        #expect(sent.contains("\r\n...two dots\r\n"))
        #expect(sent.hasSuffix("\r\n.\r\nQUIT\r\n"))
    }

    @Test func readsMultiLineGreetingsAndEHLOReplies() async throws {
        var script = FakeSMTPScript()
        script.greeting = ["220-fake.test ESMTP", "220-a second line of welcome", "220 and a third"]
        script.ehlo = ["250-fake.test"] + (1...40).map { "250-X-EXTENSION-\($0) with some parameters" } + ["250 SMTPUTF8"]
        let message = self.message
        let transcript = try await FakeSMTPServer.with(script) { server in
            #expect(try await sendFailure(message, with: client(port: server.port)) == nil)
            return try await server.firstTranscript()
        }
        #expect(transcript.messages.count == 1)
        #expect(transcript.lines.first == "EHLO client.test")
    }

    @Test func fallsBackToHELOWhenEHLOIsUnknown() async throws {
        var script = FakeSMTPScript()
        script.overrides["EHLO"] = .reply("502 5.5.1 EHLO not implemented")
        let message = self.message
        let transcript = try await FakeSMTPServer.with(script) { server in
            #expect(try await sendFailure(message, with: client(port: server.port)) == nil)
            return try await server.firstTranscript()
        }
        #expect(transcript.lines.prefix(2) == ["EHLO client.test", "HELO client.test"])
        #expect(transcript.messages == [message.rendered()])
    }

    @Test func neverSendsCredentialsWithoutTLS() async throws {
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250-AUTH PLAIN LOGIN", "250 8BITMIME"]
        script.overrides["AUTH"] = .reply("235 2.7.0 Authentication successful")
        let message = self.message
        let (failure, transcript, port) = try await FakeSMTPServer.with(script) { server in
            let client = client(port: server.port, username: "user", password: "s3cret-pa55")
            return (try await sendFailure(message, with: client), try await server.firstTranscript(), server.port)
        }
        #expect(failure == .credentialsNeedEncryption(server: "127.0.0.1:\(port)"))
        #expect(failure?.message.contains("s3cret") == false)
        #expect(failure?.isPermanent == true)
        #expect(failure?.message.contains("STARTTLS") == true)
        #expect(!transcript.lines.contains { $0.uppercased().hasPrefix("AUTH") })
        #expect(!transcript.lines.contains { $0.hasPrefix("MAIL") })
        let sent = String(decoding: transcript.allBytes, as: UTF8.self)
        #expect(!sent.contains("s3cret-pa55"))
        #expect(!sent.contains(Data("\u{0}user\u{0}s3cret-pa55".utf8).base64EncodedString()))
        #expect(!sent.contains(Data("s3cret-pa55".utf8).base64EncodedString()))
    }

    @Test func aRefusedRecipientIsPermanentAndQuotesTheServer() async throws {
        var script = FakeSMTPScript()
        script.overrides["RCPT"] = .reply("550 5.1.1 No such user")
        let message = self.message
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            (try await sendFailure(message, with: client(port: server.port)), try await server.firstTranscript())
        }
        #expect(failure == .refused(during: .recipient, code: 550, reply: "5.1.1 No such user"))
        #expect(failure?.isPermanent == true)
        #expect(failure?.mayHaveArrived == false)
        #expect(failure?.message == "The mail server refused the recipient: 550 5.1.1 No such user.")
        #expect(!transcript.lines.contains("DATA"))
        #expect(transcript.messages.isEmpty)
    }

    @Test func aTemporaryRefusalOfTheSenderIsTemporary() async throws {
        var script = FakeSMTPScript()
        script.overrides["MAIL"] = .reply(["451-4.3.0 Try again later,", "451 4.3.0 the queue is full"])
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port))
        }
        #expect(failure == .refused(during: .mailFrom, code: 451, reply: "4.3.0 Try again later, 4.3.0 the queue is full"))
        #expect(failure?.isPermanent == false)
        #expect(failure?.message == "The mail server refused the sender: 451 4.3.0 Try again later, 4.3.0 the queue is full.")
    }

    @Test func noAnswerToTheFinalDotTimesOutAndMayHaveArrived() async throws {
        var script = FakeSMTPScript()
        script.afterMessage = .silence
        let message = self.message
        let timeouts = SMTPTimeouts(connect: .seconds(9), command: .seconds(9), dataEnd: .seconds(1))
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            let client = client(port: server.port, timeouts: timeouts)
            return (try await sendFailure(message, with: client), try await server.firstTranscript())
        }
        #expect(failure == .timedOut(during: .messageEnd, waited: .seconds(1)))
        #expect(failure?.mayHaveArrived == true)
        #expect(failure?.isPermanent == false)
        #expect(failure?.message == "The mail server did not answer within 1 second (after the end of the message); the message may have arrived all the same.")
        #expect(transcript.messages == [message.rendered()])
    }

    @Test func aSilentServerTimesOutAtTheCommandItIgnored() async throws {
        var script = FakeSMTPScript()
        script.overrides["RCPT"] = .silence
        let message = self.message
        let timeouts = SMTPTimeouts(connect: .seconds(9), command: .seconds(1), dataEnd: .seconds(9))
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port, timeouts: timeouts))
        }
        #expect(failure == .timedOut(during: .recipient, waited: .seconds(1)))
        #expect(failure?.mayHaveArrived == false)
        #expect(failure?.message == "The mail server did not answer within 1 second (after RCPT TO).")
    }

    @Test func aConnectionClosedAtTheRecipientIsDropped() async throws {
        var script = FakeSMTPScript()
        script.overrides["RCPT"] = .close
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port))
        }
        #expect(failure == .dropped(during: .recipient))
        #expect(failure?.mayHaveArrived == false)
        #expect(failure?.isPermanent == false)
        #expect(failure?.message == "The mail server closed the connection (after RCPT TO).")
    }

    @Test func aConnectionClosedAfterTheFinalDotMayHaveArrived() async throws {
        var script = FakeSMTPScript()
        script.afterMessage = .close
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port))
        }
        #expect(failure == .dropped(during: .messageEnd))
        #expect(failure?.mayHaveArrived == true)
    }

    @Test func aServerThatTurnsTheConnectionAwayIsRefused() async throws {
        var script = FakeSMTPScript()
        script.greeting = ["554 5.7.1 No service for you"]
        script.overrides["QUIT"] = .close
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port))
        }
        #expect(failure == .refused(during: .greeting, code: 554, reply: "5.7.1 No service for you"))
        #expect(failure?.message == "The mail server turned the connection away: 554 5.7.1 No service for you.")
    }

    @Test func garbageInsteadOfAReplyIsUnexpected() async throws {
        var script = FakeSMTPScript()
        script.greeting = ["HTTP/1.1 400 Bad Request"]
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port))
        }
        guard case .unexpectedReply(.greeting, _)? = failure else {
            Issue.record("Expected an unexpected reply at the greeting, got \(String(describing: failure))")
            return
        }
    }

    @Test func nothingListeningIsUnreachable() async throws {
        // A port held by a socket that is bound but does not listen: a
        // connection to it is refused, and no other test can take it meanwhile.
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(held >= 0)
        defer { close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(held, $0, length) == 0 && getsockname(held, $0, &length) == 0 }
        }
        #expect(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let failure = try await sendFailure(message, with: client(port: port))
        #expect(failure == .unreachable(server: "127.0.0.1:\(port)", reason: "connection refused"))
        #expect(failure?.isPermanent == false)
        #expect(failure?.message == "The mail server at 127.0.0.1:\(port) could not be reached: connection refused.")
    }

    // MARK: TLS, with a throwaway CA from openssl

    @Test(.enabled(if: TestCertificates.openSSLIsInstalled))
    func upgradesWithSTARTTLSAndSignsInWithPLAINOverIt() async throws {
        let certificates = try await TestCertificates.shared.value
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250-STARTTLS", "250 8BITMIME"]
        script.ehloAfterTLS = ["250-fake.test", "250-AUTH LOGIN PLAIN", "250 8BITMIME"]
        script.overrides["STARTTLS"] = .startTLS(try certificates.serverContext("ip"))
        script.overrides["AUTH"] = .reply("235 2.7.0 Authentication successful")
        let message = self.message
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            let client = client(port: server.port, username: "user", password: "s3cret", trustRoots: certificates.caFile)
            return (try await sendFailure(message, with: client), try await server.firstTranscript())
        }
        #expect(failure == nil)
        #expect(transcript.tlsWasOn)
        let token = Data("\u{0}user\u{0}s3cret".utf8).base64EncodedString()
        #expect(transcript.lines == [
            "EHLO client.test", "STARTTLS", "EHLO client.test", "AUTH PLAIN \(token)",
            "MAIL FROM:<charts@vinylogue.test>", "RCPT TO:<listener@example.org>", "DATA", "QUIT",
        ])
        #expect(transcript.messages == [message.rendered()])
    }

    @Test(.enabled(if: TestCertificates.openSSLIsInstalled))
    func signsInWithLOGINAndReportsARefusedPassword() async throws {
        let certificates = try await TestCertificates.shared.value
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250 STARTTLS"]
        script.ehloAfterTLS = ["250-fake.test", "250 AUTH=LOGIN"]
        script.overrides["STARTTLS"] = .startTLS(try certificates.serverContext("ip"))
        script.overrides["AUTH"] = .reply(["334 VXNlcm5hbWU6"], then: ["334 UGFzc3dvcmQ6", "535 5.7.8 Authentication credentials invalid"])
        let message = self.message
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            let client = client(port: server.port, username: "user", password: "s3cret", trustRoots: certificates.caFile)
            return (try await sendFailure(message, with: client), try await server.firstTranscript())
        }
        #expect(failure == .authentication(code: 535, reply: "5.7.8 Authentication credentials invalid"))
        #expect(failure?.isPermanent == true)
        #expect(failure?.message == "The mail server did not accept the user name and password: 535 5.7.8 Authentication credentials invalid.")
        #expect(transcript.lines.suffix(from: 3).prefix(3) == [
            "AUTH LOGIN", Data("user".utf8).base64EncodedString(), Data("s3cret".utf8).base64EncodedString(),
        ])
        #expect(!transcript.lines.contains { $0.hasPrefix("MAIL") })
    }

    @Test(.enabled(if: TestCertificates.openSSLIsInstalled))
    func refusesACertificateFromAnUntrustedCA() async throws {
        let certificates = try await TestCertificates.shared.value
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250 STARTTLS"]
        script.overrides["STARTTLS"] = .startTLS(try certificates.serverContext("ip"))
        let message = self.message
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            // The system's roots, which do not include the throwaway CA.
            (try await sendFailure(message, with: client(port: server.port)), try await server.firstTranscript())
        }
        guard case .tls(_, let reason)? = failure else {
            Issue.record("Expected a TLS failure, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("could not be verified"))
        #expect(failure?.isPermanent == false)
        #expect(!transcript.lines.contains { $0.hasPrefix("MAIL") })
    }

    @Test(.enabled(if: TestCertificates.openSSLIsInstalled))
    func refusesACertificateForAnotherHost() async throws {
        let certificates = try await TestCertificates.shared.value
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250 STARTTLS"]
        script.overrides["STARTTLS"] = .startTLS(try certificates.serverContext("other"))
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port, trustRoots: certificates.caFile))
        }
        guard case .tls(_, let reason)? = failure else {
            Issue.record("Expected a TLS failure, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("does not name this server"))
    }

    @Test(.enabled(if: TestCertificates.openSSLIsInstalled))
    func speaksTLSFromTheFirstByteForSMTPS() async throws {
        let certificates = try await TestCertificates.shared.value
        var script = FakeSMTPScript()
        script.implicitTLS = try certificates.serverContext("ip")
        script.ehlo = ["250-fake.test", "250 AUTH PLAIN"]
        script.overrides["AUTH"] = .reply("235 2.7.0 Authentication successful")
        let message = self.message
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            let client = client(
                port: server.port, username: "user", password: "s3cret", security: .implicitTLS, trustRoots: certificates.caFile
            )
            return (try await sendFailure(message, with: client), try await server.firstTranscript())
        }
        #expect(failure == nil)
        #expect(transcript.lines.first == "EHLO client.test")
        #expect(transcript.lines.contains { $0.hasPrefix("AUTH PLAIN ") })
        #expect(transcript.messages == [message.rendered()])
    }

    @Test func smtpsToAPlainServerIsATLSFailure() async throws {
        let message = self.message
        let failure = try await FakeSMTPServer.with(FakeSMTPScript()) { server in
            try await sendFailure(message, with: client(port: server.port, security: .implicitTLS))
        }
        guard case .tls(_, let reason)? = failure else {
            Issue.record("Expected a TLS failure, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("did not answer in TLS"))
    }

    @Test func repliesSmuggledAheadOfTLSStopTheConversation() async throws {
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250 STARTTLS"]
        // Sent in one write, so the client reads both before it would start TLS.
        script.overrides["STARTTLS"] = .reply(["220 2.0.0 Ready to start TLS", "250 2.1.0 smuggled"])
        let message = self.message
        let (failure, transcript) = try await FakeSMTPServer.with(script) { server in
            (try await sendFailure(message, with: client(port: server.port)), try await server.firstTranscript())
        }
        #expect(failure == .unexpectedReply(during: .startTLS, reply: "more bytes after the reply to STARTTLS, before TLS began"))
        #expect(!transcript.lines.contains { $0.hasPrefix("MAIL") })
    }

    @Test func anUnreadableCAFileIsATLSFailure() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-ca-\(UUID().uuidString).pem")
        try "not a certificate\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var script = FakeSMTPScript()
        script.ehlo = ["250-fake.test", "250 STARTTLS"]
        let message = self.message
        let failure = try await FakeSMTPServer.with(script) { server in
            try await sendFailure(message, with: client(port: server.port, trustRoots: file.path))
        }
        guard case .tls(_, let reason)? = failure else {
            Issue.record("Expected a TLS failure, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("could not be read as PEM certificates"))
    }
}
