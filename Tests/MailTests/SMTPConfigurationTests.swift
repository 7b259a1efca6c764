import Foundation
import Testing

@testable import Mail

@Suite struct SMTPConfigurationTests {
    @Test func readsAFullURL() throws {
        let configuration = try SMTPConfiguration.parse(url: "smtp://mailer%40vinylogue.test:pa%40ss%3Aw%2Fd@mail.example.org:2525", caFile: nil)
        #expect(configuration.host == "mail.example.org")
        #expect(configuration.port == 2525)
        #expect(configuration.username == "mailer@vinylogue.test")
        #expect(configuration.password == "pa@ss:w/d")
        #expect(configuration.security == .startTLSWhenOffered)
        #expect(configuration.trustRoots == nil)
        #expect(configuration.heloName == "localhost")
        #expect(configuration.hasCredentials)
    }

    @Test(arguments: [
        ("smtp://mail.example.org", "mail.example.org", 587, SMTPConfiguration.Security.startTLSWhenOffered),
        ("smtps://mail.example.org", "mail.example.org", 465, .implicitTLS),
        (" SMTPS://mail.example.org:10465/ ", "mail.example.org", 10465, .implicitTLS),
        ("smtp://[::1]:2525", "::1", 2525, .startTLSWhenOffered),
        ("smtp://127.0.0.1", "127.0.0.1", 587, .startTLSWhenOffered),
    ])
    func readsDefaultsAndForms(url: String, host: String, port: Int, security: SMTPConfiguration.Security) throws {
        let configuration = try SMTPConfiguration.parse(url: url, caFile: nil)
        #expect(configuration.host == host)
        #expect(configuration.port == port)
        #expect(configuration.security == security)
        #expect(configuration.username == nil && configuration.password == nil)
        #expect(!configuration.hasCredentials)
    }

    @Test(arguments: [
        "", "mail.example.org", "mail.example.org:587", "http://mail.example.org", "smtp://", "smtp://:587",
        "smtp://user:s3cret@", "smtp://user:s3cret@:587", "smtp://host:0", "smtp://host:99999", "smtp://host:abc",
        "smtp://host/path", "smtp://host?x=1", "smtp://ho st", "smtp://user@host", "smtp://[::1", "smtp://user:s3cret@ho<st",
        "user:s3cret@host:587", "smtp://us%ZZer:s3cret@host", "ftp://user:s3cret@host",
    ])
    func refusesWhatIsNotAnSMTPURL(url: String) {
        let error = #expect(throws: MailConfigurationError.self) {
            try SMTPConfiguration.parse(url: url, caFile: nil)
        }
        #expect(error?.message.hasPrefix("VINYLOGUE_SMTP_URL is “") == true)
        #expect(error?.message.hasSuffix("give it as smtp://user:password@host:587 or smtps://host:465.") == true)
        #expect(error?.description.contains("s3cret") == false)
    }

    @Test func neverShowsThePassword() throws {
        let configuration = try SMTPConfiguration.parse(url: "smtp://user:s3cret@mail.example.org:587", caFile: nil)
        #expect(configuration.description == "smtp://user@mail.example.org:587")
        #expect("\(configuration)" == "smtp://user@mail.example.org:587")
        #expect(!String(reflecting: configuration).contains("s3cret"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("s3cret"))
        let implicit = SMTPConfiguration(host: "::1", port: 465, security: .implicitTLS)
        #expect(implicit.description == "smtps://[::1]:465")
    }

    /// Found by a hostile review: a URL with its "@" forgotten, or a
    /// password followed by a path, query, fragment or space, printed the
    /// password in the start-up error or (as a "host") on Settings.
    @Test(arguments: ["smtp://mailer:hunter2smtp.example.com:587", "smtp://user:hunter2/host:587", "smtp://user:hunter2#host:587",
                      "smtp://user:hunter2 host:587", "smtp://user:hunter2?host:587"])
    func aMistypedURLNeverShowsThePassword(url: String) {
        let error = #expect(throws: MailConfigurationError.self) { try SMTPConfiguration.parse(url: url, caFile: nil) }
        #expect(error.map { !$0.message.contains("hunter2") } == true, "\(error?.message ?? "")")
    }

    @Test func checksTheCAFile() async throws {
        let missing = "/nonexistent/ca-\(UUID().uuidString).pem"
        let error = #expect(throws: MailConfigurationError.self) {
            try SMTPConfiguration.parse(url: "smtps://mail.example.org", caFile: missing)
        }
        #expect(error?.message.hasPrefix("VINYLOGUE_SMTP_CA_FILE is “\(missing)”") == true)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString).pem")
        try "-----BEGIN CERTIFICATE-----\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        // A file that holds no certificate is said at start, not at each send.
        let broken = #expect(throws: MailConfigurationError.self) {
            try SMTPConfiguration.parse(url: "smtps://mail.example.org", caFile: file.path)
        }
        #expect(broken?.message.contains("holds no PEM certificate Vinylogue can read") == true)
        let authority = try await TestCertificates.shared.value.caFile
        let configuration = try SMTPConfiguration.parse(url: "smtps://mail.example.org", caFile: authority)
        #expect(configuration.trustRoots == authority)
        #expect(try SMTPConfiguration.parse(url: "smtps://mail.example.org", caFile: "  ").trustRoots == nil)
    }
}

@Suite struct MailAddressTests {
    @Test(arguments: [
        "listener@example.org", "first.last+charts@mail.example.co.uk", "  padded@example.org\n", "x@localhost",
        "o'brien@example.ie", "UPPER@EXAMPLE.ORG", "a-b_c@sub-domain.example.org", "1@2.3",
    ])
    func acceptsPlainAddresses(text: String) throws {
        let address = try #require(MailAddress(text))
        #expect(address.description == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(arguments: [
        "", " ", "plain", "@example.org", "listener@", "listener@example", "two@@example.org", "a@b@example.org",
        "with space@example.org", "listener@exa mple.org", "listener@example.org\r\nRCPT TO:<victim@example.org>",
        "listener@example.org\nBcc: victim@example.org", "<listener@example.org>", "listener@example.org>",
        "Name <listener@example.org>", "\"quoted\"@example.org", "a(comment)@example.org", "a,b@example.org",
        "a;b@example.org", "a:b@example.org", "a\\b@example.org", "listener@[127.0.0.1]", "jürgen@example.org",
        "listener@exämple.org", ".dot@example.org", "dot.@example.org", "two..dots@example.org",
        "listener@-example.org", "listener@example-.org", "listener@example..org", "listener@.example.org",
        "listener@example.org.", "tab\t@example.org", "nul\u{0}@example.org",
        String(repeating: "a", count: 64) + "@" + String(repeating: "b", count: 63) + "." + String(repeating: "c", count: 63) + "." + String(repeating: "d", count: 63),
        String(repeating: "a", count: 65) + "@example.org",
    ])
    func refusesEverythingElse(text: String) {
        #expect(MailAddress(text) == nil)
    }

    @Test func isAtMost254Characters() {
        let local = String(repeating: "a", count: 64)
        let domain = [String(repeating: "b", count: 63), String(repeating: "c", count: 63), String(repeating: "d", count: 61)].joined(separator: ".")
        #expect(MailAddress("\(local)@\(domain)") != nil)  // 64 + 1 + 189 = 254
        #expect(MailAddress("\(local)@\(domain)e") == nil)
    }
}
