import Foundation

/// How a web app reaches people's music servers: the operator's policy,
/// then a client of the kind asked for. One per process (the composition
/// root's), over its own HTTP client.
public struct MusicServerAccess: Sendable {
    public let policy: MusicServerPolicy
    let subsonic: @Sendable (SubsonicAccount) -> SubsonicClient
    let mpd: @Sendable (MPDAccount) -> MPDClient

    public init(policy: MusicServerPolicy, subsonic: @escaping @Sendable (SubsonicAccount) -> SubsonicClient,
                mpd: @escaping @Sendable (MPDAccount) -> MPDClient = { MPDClient(account: $0) }) {
        self.policy = policy
        self.subsonic = subsonic
        self.mpd = mpd
    }

    /// What a person gave in a form, as a server to reach.
    public enum Server: Sendable {
        case subsonic(SubsonicAccount)
        case mpd(MPDAccount)

        /// Reads the form's fields; nil with the sentence why not.
        public static func parse(kind: String, address: String, username: String?, password: String?) -> Result<Server, MusicServerAccessProblem> {
            switch kind {
            case "subsonic":
                guard let user = username, !user.isEmpty else { return .failure(.init("Give your user on the server.")) }
                guard let password, !password.isEmpty else { return .failure(.init("Give your password on the server.")) }
                guard let account = SubsonicAccount(address: address, username: user, password: password) else {
                    return .failure(.init("“\(address)” is not a server address: give it as your music apps have it, as in http://nas.local:4533."))
                }
                return .success(.subsonic(account))
            case "mpd":
                guard let account = MPDAccount(address: address, password: password) else {
                    return .failure(.init("“\(address)” is not mpd’s address: give its host and port, as in nas.local:6600."))
                }
                return .success(.mpd(account))
            default:
                return .failure(.init("Choose a Subsonic-API server or mpd."))
            }
        }

        var host: String {
            switch self {
            case .subsonic(let account): account.address.host ?? ""
            case .mpd(let account): account.host
            }
        }
    }

    /// The library `server` is, once the policy allows its host, or why not.
    public func library(_ server: Server) async -> Result<any MusicLibrary, MusicServerAccessProblem> {
        if let refusal = await policy.refusal(of: server.host) { return .failure(.init(refusal)) }
        switch server {
        case .subsonic(let account): return .success(subsonic(account))
        case .mpd(let account): return .success(mpd(account))
        }
    }

    /// Whether `server` answers as it should, signed in: nil, or why not.
    public func check(_ server: Server) async -> MusicServerAccessProblem? {
        switch await library(server) {
        case .failure(let problem): return problem
        case .success(let library):
            do {
                try await library.ping()
                return nil
            } catch {
                return MusicServerAccessProblem(error.description)
            }
        }
    }
}

/// Why a music server cannot be used, in a sentence for the person.
public struct MusicServerAccessProblem: Error, Sendable, Equatable {
    public let sentence: String

    public init(_ sentence: String) { self.sentence = sentence }
}
