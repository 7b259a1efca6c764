import Foundation
import NIOSSL

/// Where mail goes: an SMTP server, how to secure the connection to it,
/// and the account to sign in with.
public struct SMTPConfiguration: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// How the connection is encrypted.
    public enum Security: Sendable, Equatable {
        /// `smtp://`: plain TCP, upgraded with STARTTLS whenever the server
        /// offers it. A user name and password are only ever sent after the
        /// upgrade: without STARTTLS, a send with credentials fails.
        case startTLSWhenOffered
        /// `smtps://`: TLS from the first byte.
        case implicitTLS
    }

    /// The environment variable the URL is read from, as errors name it.
    public static let urlVariable = "VINYLOGUE_SMTP_URL"
    /// The environment variable the CA file is read from, as errors name it.
    public static let caFileVariable = "VINYLOGUE_SMTP_CA_FILE"

    /// The server's host name or IP address (no brackets around IPv6).
    public var host: String
    public var port: Int
    /// The account to sign in with; no sign-in without one.
    public var username: String?
    /// The account's password. Never logged, shown or put in an error.
    public var password: String?
    public var security: Security
    /// A PEM file of CA certificates to trust instead of the system's, for
    /// a self-hosted server with its own CA.
    public var trustRoots: String?
    /// The name the client gives in `EHLO`.
    public var heloName: String

    public init(
        host: String, port: Int, username: String? = nil, password: String? = nil,
        security: Security = .startTLSWhenOffered, trustRoots: String? = nil, heloName: String = "localhost"
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.security = security
        self.trustRoots = trustRoots
        self.heloName = heloName
    }

    /// Whether the client signs in: both a user name and a password are set.
    public var hasCredentials: Bool {
        (username.map { !$0.isEmpty } ?? false) && password != nil
    }

    /// `host:port`, IPv6 in brackets, as messages name the server.
    public var serverName: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The URL without its password: `smtp://user@host:587`.
    public var description: String {
        let scheme = security == .implicitTLS ? "smtps" : "smtp"
        let user = username.map { (Self.percentEncoded($0)) + "@" } ?? ""
        return "\(scheme)://\(user)\(serverName)"
    }

    /// The same as `description`: no password.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: every field but the password's value.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "username": username as Any,
            "password": password == nil ? "nil" : "(set, not shown)", "security": security,
            "trustRoots": trustRoots as Any, "heloName": heloName,
        ])
    }

    /// Reads `smtp://user:password@host:587` or `smtps://host:465`: user and
    /// password percent-decoded, port 587 for `smtp` and 465 for `smtps`
    /// when none is given. `caFile`, when set, must name an existing file.
    public static func parse(url: String, caFile: String?) throws(MailConfigurationError) -> SMTPConfiguration {
        let text = url.trimmingASCIIWhitespace()
        func invalid(_ problem: String) -> MailConfigurationError {
            MailConfigurationError(message: "\(urlVariable) is “\(redacted(text))”\(problem): give it as smtp://user:password@host:587 or smtps://host:465.")
        }
        guard let schemeEnd = text.range(of: "://") else { throw invalid("") }
        let security: Security
        switch text[..<schemeEnd.lowerBound].lowercased() {
        case "smtp": security = .startTLSWhenOffered
        case "smtps": security = .implicitTLS
        default: throw invalid(", whose scheme is neither smtp nor smtps")
        }
        var rest = text[schemeEnd.upperBound...]
        // A lone trailing slash is harmless; a path, query or fragment means something else was meant.
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains(where: { "/?#".contains($0) }), !rest.contains(where: \.isWhitespace) else {
            throw invalid(", which is not just a server address")
        }

        var username: String?
        var password: String?
        var hostPort = rest
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            hostPort = rest[rest.index(after: at)...]
            let user: Substring
            if let colon = userInfo.firstIndex(of: ":") {
                user = userInfo[..<colon]
                guard let decoded = String(userInfo[userInfo.index(after: colon)...]).removingPercentEncoding else {
                    throw invalid(", whose password is not valid percent-encoding")
                }
                password = decoded
            } else {
                user = userInfo
            }
            guard let decodedUser = String(user).removingPercentEncoding, !decodedUser.isEmpty else {
                throw invalid(", whose user name is empty or not valid percent-encoding")
            }
            username = decodedUser
            guard password != nil else { throw invalid(", which has a user name but no password") }
        }

        var host: String
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw invalid(", whose IPv6 address has no closing ]") }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid(", which has something after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = String(hostPort[..<colon])
            portText = hostPort[hostPort.index(after: colon)...]
            // "user:password" with its "@" forgotten would otherwise pass
            // for a host, and be shown wherever the server is named.
            guard !host.contains(":") else { throw invalid(", whose host is not a host name or IP address (an IPv6 address goes in [ ])") }
        } else {
            host = String(hostPort)
        }
        host = host.removingPercentEncoding ?? host
        guard !host.isEmpty else { throw invalid(", which has no host") }
        guard host.utf8.allSatisfy({ $0 > 32 && $0 < 127 && !"@[]<>\\\"".utf8.contains($0) }) else {
            throw invalid(", whose host is not a host name or IP address")
        }

        var port = security == .implicitTLS ? 465 : 587
        if let portText {
            guard portText.allSatisfy(\.isASCII), let number = Int(portText), (1...65535).contains(number) else {
                throw invalid(", whose port is not a number from 1 to 65535")
            }
            port = number
        }

        var trustRoots: String?
        if let caFile = caFile?.trimmingASCIIWhitespace(), !caFile.isEmpty {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: caFile, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw MailConfigurationError(
                    message: "\(caFileVariable) is “\(caFile)”, which is not a file: give the path of a PEM file of the CA certificates to trust, or leave it unset to trust the system's."
                )
            }
            guard (try? NIOSSLCertificate.fromPEMFile(caFile))?.isEmpty == false else {
                throw MailConfigurationError(
                    message: "\(caFileVariable) is “\(caFile)”, which holds no PEM certificate Vinylogue can read: give the path of a PEM file of the CA certificates to trust, or leave it unset to trust the system's."
                )
            }
            trustRoots = caFile
        }
        return SMTPConfiguration(
            host: host, port: port, username: username, password: password, security: security, trustRoots: trustRoots
        )
    }

    /// `text` with whatever sits between the user name and the last `@`
    /// taken out, so that a password never reaches a message.
    static func redacted(_ text: String) -> String {
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard let at = text.lastIndex(of: "@"), at >= start else {
            // No "@": a forgotten one may have left a password anywhere
            // after a ":" but the port's: show only up to the first ":".
            guard let colon = text[start...].firstIndex(of: ":"),
                  !text[text.index(after: colon)...].allSatisfy(\.isNumber) else { return text }
            return String(text[..<colon]) + ":…"
        }
        guard let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + String(text[at...])
    }

    private static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.urlUserAllowed
        allowed.remove(charactersIn: ":@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

/// Why an SMTP configuration cannot be used, in a sentence that says what to set.
public struct MailConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and how to put it right. Never holds a password.
    public let message: String

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
