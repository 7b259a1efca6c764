import Foundation
import VinylogueCore

/// A person's own music server, as they gave it in Settings: the kind, the
/// address, the user, and the password — which is kept for signing in
/// there and never shown, logged, exported or copied into a download.
public struct MusicServerSetting: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A Subsonic-API server (Navidrome, gonic, Airsonic, Supysonic).
        case subsonic
        /// mpd (its address is host:port; it has no users).
        case mpd
    }

    public let kind: Kind
    /// An http(s) address for Subsonic, host:port for mpd.
    public let address: String
    /// The user on a Subsonic server; nil for mpd.
    public let username: String?
    public let password: String?

    public init(kind: Kind, address: String, username: String?, password: String?) {
        self.kind = kind
        self.address = address
        self.username = username.flatMap { $0.isEmpty ? nil : $0 }
        self.password = password.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// Each list owner's music server (an account's, or the household's), in
/// table `music_server` of either store, erased with the account.
public protocol MusicServerSettings: Sendable {
    func musicServer(of owner: ListOwner) async throws -> MusicServerSetting?
    /// Keeps `setting` as `owner`'s server, replacing any.
    func setMusicServer(_ setting: MusicServerSetting, of owner: ListOwner, at now: Date) async throws
    func forgetMusicServer(of owner: ListOwner) async throws
}
