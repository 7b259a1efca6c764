import Foundation

/// How a web app reaches people's music servers: the operator's policy,
/// then a client of the kind asked for. One per process (the composition
/// root's), over its own HTTP client.
public struct MusicServerAccess: Sendable {
    public let policy: MusicServerPolicy
    let subsonic: @Sendable (SubsonicAccount) -> SubsonicClient
    /// A Subsonic client whose connections go to the address given
    /// (the one the policy checked), and what closes it after.
    let pinnedSubsonic: @Sendable (SubsonicAccount, _ address: String) -> (client: SubsonicClient, close: @Sendable () async -> Void)
    let mpd: @Sendable (MPDAccount) -> MPDClient

    public init(policy: MusicServerPolicy, subsonic: @escaping @Sendable (SubsonicAccount) -> SubsonicClient,
                pinnedSubsonic: (@Sendable (SubsonicAccount, String) -> (client: SubsonicClient, close: @Sendable () async -> Void))? = nil,
                mpd: @escaping @Sendable (MPDAccount) -> MPDClient = { MPDClient(account: $0) }) {
        self.policy = policy
        self.subsonic = subsonic
        self.pinnedSubsonic = pinnedSubsonic ?? Self.livePinned
        self.mpd = mpd
    }

    /// Over an HTTP client of its own that connects the account's host to
    /// `address` (TLS still checks the name).
    static let livePinned: @Sendable (SubsonicAccount, String) -> (client: SubsonicClient, close: @Sendable () async -> Void) = { account, address in
        let http = SubsonicTransport.makeHTTPClient(resolving: [account.address.host ?? "": address])
        return (SubsonicClient(account: account, transport: .live(http)), { try? await http.shutdown() })
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

    /// What `body` does with the library `server` is, once the policy
    /// allows its host, or why not. Every connection it makes goes to the
    /// address the policy checked.
    public func withLibrary<Value: Sendable>(_ server: Server,
                                             _ body: (any MusicLibrary) async -> Value) async -> Result<Value, MusicServerAccessProblem> {
        let pin: String?
        switch await policy.decide(server.host) {
        case .refused(let why): return .failure(.init(why))
        case .allowed(let checked): pin = checked
        }
        switch (server, pin) {
        case (.subsonic(let account), nil): return .success(await body(subsonic(account)))
        case (.subsonic(let account), let address?):
            let pinned = pinnedSubsonic(account, address)
            let value = await body(pinned.client)
            await pinned.close()
            return .success(value)
        case (.mpd(let account), nil): return .success(await body(mpd(account)))
        case (.mpd(let account), let address?): return .success(await body(mpd(account.pinned(to: address))))
        }
    }

    /// Whether `server` answers as it should, signed in: nil, or why not.
    public func check(_ server: Server) async -> MusicServerAccessProblem? {
        let outcome = await withLibrary(server) { library -> MusicServerAccessProblem? in
            do throws(MusicServerError) {
                try await library.ping()
                return nil
            } catch {
                return MusicServerAccessProblem(error.description)
            }
        }
        switch outcome {
        case .failure(let problem): return problem
        case .success(let problem): return problem
        }
    }
}

/// Why a music server cannot be used, in a sentence for the person.
public struct MusicServerAccessProblem: Error, Sendable, Equatable {
    public let sentence: String

    public init(_ sentence: String) { self.sentence = sentence }
}
