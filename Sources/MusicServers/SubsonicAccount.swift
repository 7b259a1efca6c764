import Foundation

/// A person's Subsonic-API music server (Navidrome, gonic, Airsonic,
/// Supysonic): its address and the account to use there. The password is
/// never part of a description, a log line or an error.
public struct SubsonicAccount: Sendable, CustomStringConvertible {
    /// The server's root, as its own clients are given it (a path prefix
    /// such as `/music` allowed): the API is under `rest/`.
    public let address: URL
    public let username: String
    let password: String

    /// Nil when `address` is not an http(s) address with a host, or a
    /// name is empty.
    public init?(address text: String, username: String, password: String) {
        var text = text.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil, url.query == nil, url.fragment == nil,
              url.port.map({ (1...65535).contains($0) }) ?? true, !username.isEmpty, !password.isEmpty else { return nil }
        address = url
        self.username = username
        self.password = password
    }

    /// The server as sentences name it: its host (an IPv6 address in
    /// brackets), and its port when given.
    public var server: String {
        let host = address.host ?? ""
        return (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + (address.port.map { ":\($0)" } ?? "")
    }

    /// The server and the user, never the password.
    public var description: String { "\(username) at \(address.absoluteString)" }
}

/// Why a music server did not do what was asked, in a sentence for the
/// person (what to check next included). Nothing is stored when it fails.
public enum MusicServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached (name, connection, TLS).
    case unreachable(String)
    /// It took longer than the patience given.
    case timedOut(String)
    /// The user or the password is wrong.
    case wrongCredentials(String)
    /// The password is wrong, or one is needed (mpd has no users).
    case wrongPassword(String)
    /// It answered, but not as a Subsonic-API server does.
    case notSubsonic(String)
    /// It answered, but not as mpd does.
    case notMPD(String)
    /// It refused, with its own reason.
    case refused(String, reason: String)
    /// Its answer was larger than Vinylogue reads.
    case tooLarge(String)
    /// It answered with a redirect, which Vinylogue does not follow.
    case redirected(String)
    /// Looking for a playlist's albums there took longer than the whole
    /// playlist may (each answer came in time, but they were many and slow).
    case tooSlow(String, albums: Int, seconds: Int)

    public var description: String {
        switch self {
        case .unreachable(let server): "Vinylogue could not reach \(server). Check the address, and that the server is running."
        case .timedOut(let server): "\(server) did not answer in time. Try again, or check that the server is not overloaded."
        case .wrongCredentials(let server): "\(server) does not accept that user and password. Check them, then try again."
        case .notSubsonic(let server): "\(server) does not answer as a Subsonic-API music server does. Check the address (the one your music apps use)."
        case .wrongPassword(let server): "\(server) does not accept that password, or wants one. Check it, then try again."
        case .notMPD(let server): "\(server) does not answer as mpd does. Check the host and the port (6600 unless mpd.conf says otherwise)."
        case .refused(let server, let reason): "\(server) refused: \(reason)"
        case .tooLarge(let server): "\(server) sent a larger answer than Vinylogue reads."
        case .redirected(let server): "\(server) answered with a redirect, which Vinylogue does not follow. Give the address it redirects to."
        case .tooSlow(let server, let albums, let seconds):
            "\(server) took longer than \(seconds) seconds to find \(albums == 1 ? "the album" : "the \(albums) albums"). Try again when it is less busy."
        }
    }
}
