/// A point in an SMTP conversation, as failures name it.
public enum SMTPStep: String, Sendable, Hashable, CustomStringConvertible {
    case greeting = "the greeting"
    case ehlo = "EHLO"
    case helo = "HELO"
    case startTLS = "STARTTLS"
    case authentication = "AUTH"
    case mailFrom = "MAIL FROM"
    case recipient = "RCPT TO"
    case data = "DATA"
    /// The final `.` that ends the message.
    case messageEnd = "the end of the message"
    case quit = "QUIT"

    public var description: String { rawValue }

    /// “after RCPT TO”, “waiting for its greeting”.
    var phrase: String {
        self == .greeting ? "waiting for its greeting" : "after \(rawValue)"
    }
}

/// Why a message was not sent, or may not have been.
///
/// `message` is one sentence for the person on the settings page, with the
/// server's own reason where it gave one; no case ever holds a password
/// or what `AUTH` sent.
public enum MailFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection could be made (`server` is `host:port`).
    case unreachable(server: String, reason: String)
    /// The TLS handshake failed, or the server's certificate was not trusted.
    case tls(server: String, reason: String)
    /// The server did not accept the user name and password (`reply` is its text).
    case authentication(code: Int, reply: String)
    /// The server answered 4xx or 5xx at `during` (`reply` is its text).
    case refused(during: SMTPStep, code: Int, reply: String)
    /// No reply came within `waited`.
    case timedOut(during: SMTPStep, waited: Duration)
    /// The connection ended before the reply came.
    case dropped(during: SMTPStep)
    /// A reply that is not SMTP, or not one the command can have.
    case unexpectedReply(during: SMTPStep, reply: String)
    /// A user name and password are configured but the server offers no
    /// STARTTLS on a plain connection, so they were not sent.
    case credentialsNeedEncryption(server: String)
    /// A user name and password are configured but the server offers no
    /// sign-in Vinylogue supports (PLAIN or LOGIN); `offered` is what it does offer.
    case authenticationUnavailable(server: String, offered: [String])

    /// Whether sending the same message the same way will fail again:
    /// 5xx refusals, 5xx sign-in failures and configurations the server
    /// cannot serve. Everything else may pass on a later try.
    public var isPermanent: Bool {
        switch self {
        case .refused(_, let code, _), .authentication(let code, _): code >= 500
        case .credentialsNeedEncryption, .authenticationUnavailable: true
        case .unreachable, .tls, .timedOut, .dropped, .unexpectedReply: false
        }
    }

    /// Whether the server may have taken the message even so: the final
    /// `.` was sent, and the connection was lost or went quiet before the
    /// server's answer to it came. Sending again may deliver it twice.
    public var mayHaveArrived: Bool {
        switch self {
        case .timedOut(.messageEnd, _), .dropped(.messageEnd), .unexpectedReply(.messageEnd, _): true
        default: false
        }
    }

    /// What went wrong, in one sentence.
    public var message: String {
        switch self {
        case .unreachable(let server, let reason):
            return "The mail server at \(server) could not be reached: \(reason)."
        case .tls(let server, let reason):
            return "The secure connection to the mail server at \(server) failed: \(reason)."
        case .authentication(let code, let reply):
            return "The mail server did not accept the user name and password: \(Self.quoted(code, reply))"
        case .refused(let step, let code, let reply):
            return "The mail server \(Self.refusal(step)): \(Self.quoted(code, reply))"
        case .timedOut(let step, let waited):
            return "The mail server did not answer within \(Self.spoken(waited)) (\(step.phrase))"
                + (mayHaveArrived ? "; the message may have arrived all the same." : ".")
        case .dropped(let step):
            return "The mail server closed the connection (\(step.phrase))"
                + (mayHaveArrived ? "; the message may have arrived all the same." : ".")
        case .unexpectedReply(let step, let reply):
            return "The mail server answered with something Vinylogue did not expect (\(step.phrase)): \(Self.quoted(reply))"
        case .credentialsNeedEncryption(let server):
            return "The mail server at \(server) does not offer STARTTLS, so the user name and password were not sent "
                + "over an unencrypted connection: use its submission port (587) or smtps:// with port 465."
        case .authenticationUnavailable(let server, let offered):
            let what = offered.isEmpty ? "no sign-in at all" : "only \(offered.joined(separator: ", "))"
            return "The mail server at \(server) offers \(what), and Vinylogue signs in with PLAIN or LOGIN: "
                + "use its submission port (587), or leave the user name and password out if it needs none."
        }
    }

    public var description: String { message }

    private static func refusal(_ step: SMTPStep) -> String {
        switch step {
        case .greeting: "turned the connection away"
        case .ehlo, .helo: "refused the client's greeting (\(step))"
        case .startTLS: "refused to start TLS"
        case .authentication: "refused to sign in"
        case .mailFrom: "refused the sender"
        case .recipient: "refused the recipient"
        case .data: "refused to take a message"
        case .messageEnd: "refused the message"
        case .quit: "refused to end the session"
        }
    }

    /// `550 5.1.1 No such user.`: the code, the server's text, a full stop.
    private static func quoted(_ code: Int, _ reply: String) -> String {
        quoted(reply.isEmpty ? "\(code)" : "\(code) \(reply)")
    }

    /// `text` ending in a full stop unless it already ends a sentence.
    private static func quoted(_ text: String) -> String {
        text.last.map { ".!?".contains($0) } == true ? text : text + "."
    }

    /// “30 seconds”, “1 second”, “0.5 seconds”.
    static func spoken(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 {
            let seconds = milliseconds / 1000
            return seconds == 1 ? "1 second" : "\(seconds) seconds"
        }
        let tenths = (milliseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10) seconds"
    }
}

/// How long the client waits at each stage of a send.
public struct SMTPTimeouts: Sendable, Equatable {
    /// For the TCP connection to open.
    public var connect: Duration
    /// For the reply to each command, and for the greeting.
    public var command: Duration
    /// For the reply to the final `.`, while the server checks the message.
    public var dataEnd: Duration

    public init(connect: Duration = .seconds(10), command: Duration = .seconds(30), dataEnd: Duration = .seconds(60)) {
        self.connect = connect
        self.command = command
        self.dataEnd = dataEnd
    }
}
