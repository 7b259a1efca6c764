import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Sends messages through one SMTP server, a new connection for each
/// message: greeting, EHLO, STARTTLS when offered, AUTH when configured,
/// MAIL FROM, RCPT TO, DATA, QUIT.
///
/// Credentials are only ever sent over TLS. Every command waits for its
/// reply within `SMTPTimeouts`; the connection is closed on every path
/// before `send` returns or throws.
public struct SMTPClient: Sendable {
    public let configuration: SMTPConfiguration
    public let timeouts: SMTPTimeouts
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    /// Made once: it reads the trusted certificates from disk, which `send` should not.
    private let tlsContext: Result<NIOSSLContext, MailFailure>

    public init(
        configuration: SMTPConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeouts: SMTPTimeouts = .init(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.timeouts = timeouts
        var logger = logger
        logger[metadataKey: "smtp.server"] = "\(configuration.serverName)"
        self.logger = logger
        self.tlsContext = Self.makeTLSContext(configuration)
    }

    /// Delivers `message` to the server for `message.to`.
    public func send(_ message: MailMessage) async throws(MailFailure) {
        let implicitTLS = configuration.security == .implicitTLS ? try tlsContext.get() : nil
        let connection = try await connect(tls: implicitTLS)
        logger.debug("Connected to the mail server", metadata: ["smtp.to": "\(message.to)"])
        do throws(MailFailure) {
            try await converse(on: connection, sending: message)
        } catch {
            if error.leavesConversationOpen { connection.send("QUIT") }
            await connection.close()
            logger.debug("Mail was not sent", metadata: ["smtp.failure": "\(error.message)"])
            throw error
        }
        await connection.close()
        logger.debug("Mail sent", metadata: ["smtp.to": "\(message.to)"])
    }

    // MARK: The conversation

    private func converse(on connection: SMTPConnection, sending message: MailMessage) async throws(MailFailure) {
        let greeting = try await reply(on: connection, to: nil, step: .greeting)
        try expect(greeting, 220, step: .greeting)

        var extensions = try await hello(on: connection)
        var encrypted = configuration.security == .implicitTLS
        if !encrypted, extensions.offers("STARTTLS") {
            let context = try tlsContext.get()
            let ready = try await reply(on: connection, to: "STARTTLS", step: .startTLS)
            try expect(ready, 220, step: .startTLS)
            do throws(SMTPConnectionEnding) {
                try await connection.startTLS(context: context, serverHostname: sniHostname)
            } catch {
                throw failure(error, step: .startTLS, waited: timeouts.command)
            }
            encrypted = true
            extensions = try await hello(on: connection)
        }

        if configuration.hasCredentials {
            guard encrypted else { throw .credentialsNeedEncryption(server: configuration.serverName) }
            try await authenticate(on: connection, offered: extensions.authenticationMechanisms)
        }

        let sender = try await reply(on: connection, to: "MAIL FROM:<\(message.from)>", step: .mailFrom)
        try expect(sender, 250, step: .mailFrom)
        let recipient = try await reply(on: connection, to: "RCPT TO:<\(message.to)>", step: .recipient)
        try expect(recipient, 250, 251, step: .recipient)
        let go = try await reply(on: connection, to: "DATA", step: .data)
        try expect(go, 354, step: .data)
        let accepted = try await reply(
            on: connection, sending: Self.dataPayload(message.rendered()), step: .messageEnd, within: timeouts.dataEnd
        )
        try expect(accepted, 250, step: .messageEnd)

        // The message is the server's now: a QUIT that goes wrong changes nothing.
        _ = try? await reply(on: connection, to: "QUIT", step: .quit)
    }

    /// EHLO, or HELO when the server does not know EHLO (a 5xx): the
    /// extensions the server offers (none after HELO).
    private func hello(on connection: SMTPConnection) async throws(MailFailure) -> SMTPExtensions {
        let name = Self.heloName(configuration.heloName)
        let ehlo = try await reply(on: connection, to: "EHLO \(name)", step: .ehlo)
        if ehlo.code == 250 { return SMTPExtensions(ehloReply: ehlo) }
        guard (500..<600).contains(ehlo.code) else {
            try expect(ehlo, 250, step: .ehlo)
            return SMTPExtensions(ehloReply: ehlo)
        }
        let helo = try await reply(on: connection, to: "HELO \(name)", step: .helo)
        try expect(helo, 250, step: .helo)
        return SMTPExtensions()
    }

    /// AUTH PLAIN, or AUTH LOGIN when only that is offered.
    private func authenticate(on connection: SMTPConnection, offered: [String]) async throws(MailFailure) {
        let username = configuration.username ?? ""
        let password = configuration.password ?? ""
        let outcome: SMTPReply
        if offered.contains("PLAIN") {
            let token = Self.base64("\u{0}\(username)\u{0}\(password)")
            outcome = try await reply(on: connection, to: "AUTH PLAIN \(token)", step: .authentication)
        } else if offered.contains("LOGIN") {
            let start = try await reply(on: connection, to: "AUTH LOGIN", step: .authentication)
            try expectChallenge(start)
            let user = try await reply(on: connection, to: Self.base64(username), step: .authentication)
            try expectChallenge(user)
            outcome = try await reply(on: connection, to: Self.base64(password), step: .authentication)
        } else {
            throw .authenticationUnavailable(server: configuration.serverName, offered: offered)
        }
        guard outcome.code == 235 else {
            if outcome.isNegative { throw .authentication(code: outcome.code, reply: outcome.text) }
            throw .unexpectedReply(during: .authentication, reply: "\(outcome.code) \(outcome.text)")
        }
        logger.debug("Signed in to the mail server")
    }

    private func expectChallenge(_ reply: SMTPReply) throws(MailFailure) {
        guard reply.code == 334 else {
            if reply.isNegative { throw .authentication(code: reply.code, reply: reply.text) }
            throw .unexpectedReply(during: .authentication, reply: "\(reply.code) \(reply.text)")
        }
    }

    /// Passes a reply with one of `codes`; anything else fails as the server's refusal or as unexpected.
    private func expect(_ reply: SMTPReply, _ codes: Int..., step: SMTPStep) throws(MailFailure) {
        guard !codes.contains(reply.code) else { return }
        if reply.isNegative { throw .refused(during: step, code: reply.code, reply: reply.text) }
        throw .unexpectedReply(during: step, reply: "\(reply.code) \(reply.text)")
    }

    /// Sends `command` and waits for its reply; never logs what AUTH sends.
    private func reply(
        on connection: SMTPConnection, to command: String?, step: SMTPStep, within timeout: Duration? = nil
    ) async throws(MailFailure) -> SMTPReply {
        try await reply(on: connection, sending: command.map { ByteBuffer(string: $0 + "\r\n") }, step: step, within: timeout)
    }

    private func reply(
        on connection: SMTPConnection, sending bytes: ByteBuffer?, step: SMTPStep, within timeout: Duration? = nil
    ) async throws(MailFailure) -> SMTPReply {
        let timeout = timeout ?? timeouts.command
        if bytes != nil { logger.trace("Sending \(step)") }
        do throws(SMTPConnectionEnding) {
            let reply = try await connection.reply(to: bytes, within: timeout)
            logger.trace("The mail server replied \(reply.code) to \(step)")
            return reply
        } catch {
            throw failure(error, step: step, waited: timeout)
        }
    }

    private func failure(_ ending: SMTPConnectionEnding, step: SMTPStep, waited: Duration) -> MailFailure {
        switch ending {
        case .closed: .dropped(during: step)
        case .timedOut: .timedOut(during: step, waited: waited)
        case .tls(let reason): .tls(server: configuration.serverName, reason: reason)
        case .malformed(let reason): .unexpectedReply(during: step, reply: reason)
        }
    }

    // MARK: Connecting

    private func connect(tls: NIOSSLContext?) async throws(MailFailure) -> SMTPConnection {
        let serverHostname = sniHostname
        let bootstrap = ClientBootstrap(group: eventLoopGroup).connectTimeout(TimeAmount(timeouts.connect))
        do {
            return try await bootstrap.connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        let handler = try NIOSSLClientHandler(context: tls, serverHostname: serverHostname)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    return try SMTPConnection(addingHandlersTo: channel)
                }
            }
        } catch {
            throw .unreachable(server: configuration.serverName, reason: Self.connectionProblem(error, timeout: timeouts.connect))
        }
    }

    /// The name TLS verifies the certificate against and sends as SNI; `nil`
    /// for an IP address, which is verified against the certificate's IP SANs.
    private var sniHostname: String? {
        (try? SocketAddress(ipAddress: configuration.host, port: 0)) == nil ? configuration.host : nil
    }

    /// A client TLS context that trusts the configured CA file, or the system's roots.
    private static func makeTLSContext(_ configuration: SMTPConfiguration) -> Result<NIOSSLContext, MailFailure> {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRoots = configuration.trustRoots { tls.trustRoots = .file(trustRoots) }
        do {
            return .success(try NIOSSLContext(configuration: tls))
        } catch {
            let reason = configuration.trustRoots.map { "the CA file “\($0)” could not be read as PEM certificates (\(error))" }
                ?? "TLS could not be set up (\(error))"
            return .failure(.tls(server: configuration.serverName, reason: reason))
        }
    }

    /// A connection error in a few words.
    static func connectionProblem(_ error: any Error, timeout: Duration) -> String {
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "its host name could not be resolved"
            }
            if let first = error.connectionErrors.first { return connectionProblem(first.error, timeout: timeout) }
            return "its host name has no address"
        }
        if case ChannelError.connectTimeout = error {
            return "no connection within \(MailFailure.spoken(timeout))"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ENETUNREACH: return "the network is unreachable"
            case EHOSTUNREACH: return "no route to the host"
            case ETIMEDOUT: return "no connection within \(MailFailure.spoken(timeout))"
            default: return String(cString: strerror(error.errnoCode)).lowercased()
            }
        }
        return "\(error)"
    }

    // MARK: Encoding

    /// The message dot-stuffed (a line starting with `.` gets another),
    /// then the `.` line that ends DATA.
    static func dataPayload(_ rendered: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(rendered.count + rendered.count / 64 + 5)
        var atLineStart = true
        for byte in rendered {
            if atLineStart, byte == UInt8(ascii: ".") { buffer.writeInteger(UInt8(ascii: ".")) }
            buffer.writeInteger(byte)
            atLineStart = byte == UInt8(ascii: "\n")
        }
        if !atLineStart { buffer.writeString("\r\n") }
        buffer.writeString(".\r\n")
        return buffer
    }

    /// The configured EHLO name, or `localhost` if it holds anything but a
    /// host name's characters (it goes into a command line).
    static func heloName(_ name: String) -> String {
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"):
                true
            default:
                false
            }
        }
        return allowed && !name.isEmpty ? name : "localhost"
    }

    private static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }
}

/// What a server's EHLO reply offers: its keywords and their parameters.
struct SMTPExtensions {
    /// Upper-cased keyword → its parameters.
    private var keywords: [String: [String]] = [:]

    init() {}

    /// From a `250` EHLO reply; the first line is the server's greeting, not an extension.
    init(ehloReply: SMTPReply) {
        for line in ehloReply.lines.dropFirst() {
            // Old servers write `AUTH=PLAIN LOGIN`.
            let words = line.replacingOccurrences(of: "=", with: " ").split(separator: " ").map { $0.uppercased() }
            guard let keyword = words.first else { continue }
            keywords[keyword, default: []] += words.dropFirst()
        }
    }

    func offers(_ keyword: String) -> Bool { keywords[keyword] != nil }

    /// The SASL mechanisms after `AUTH`, upper-cased.
    var authenticationMechanisms: [String] {
        var seen: [String] = []
        for mechanism in keywords["AUTH"] ?? [] where !seen.contains(mechanism) { seen.append(mechanism) }
        return seen
    }
}

extension MailFailure {
    /// Whether the server is still listening after this failure, so a
    /// `QUIT` is worth sending before closing.
    var leavesConversationOpen: Bool {
        switch self {
        case .refused, .authentication, .credentialsNeedEncryption, .authenticationUnavailable: true
        case .unreachable, .tls, .timedOut, .dropped, .unexpectedReply: false
        }
    }
}
