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
/// table `music_server` of either store, erased with the account; and the
/// weekly playlist kept there (`KeptPlaylists`).
public protocol MusicServerSettings: KeptPlaylists {
    func musicServer(of owner: ListOwner) async throws -> MusicServerSetting?
    /// Keeps `setting` as `owner`'s server, replacing any (a weekly
    /// playlist kept on the one before goes on, on this one).
    func setMusicServer(_ setting: MusicServerSetting, of owner: ListOwner, at now: Date) async throws
    /// Forgets `owner`'s server, its weekly playlist and that playlist's job.
    func forgetMusicServer(of owner: ListOwner) async throws
}

/// A week's playlist an owner keeps on their music server, refreshed by
/// itself each week ("Keep a playlist 'This week, years ago' on my
/// server"): the one queue's `JobKind.weeklyPlaylist` job, keyed by the
/// owner's id, makes it again when the week it shows changes.
public struct KeptPlaylist: Sendable, Equatable {
    public let owner: ListOwner
    /// The years back its week is.
    public let yearsAgo: Int
    /// The week last queued (its start, Unix seconds, as
    /// `LastFMWeekCalendar` counts it); nil until the first is queued.
    public let week: Int64?
    /// When a run last ended, and what it did, in a sentence for Settings.
    public let notedAt: Date?
    public let note: String?

    public init(owner: ListOwner, yearsAgo: Int, week: Int64?, notedAt: Date?, note: String?) {
        self.owner = owner
        self.yearsAgo = yearsAgo
        self.week = week
        self.notedAt = notedAt
        self.note = note
    }
}

/// The weekly playlists kept on owners' servers, in the same table as the
/// servers (`music_server`): a server forgotten, or its account erased,
/// takes its weekly playlist and that playlist's job with it.
public protocol KeptPlaylists: Sendable {
    /// `owner`'s weekly playlist; nil when they keep none (or have no server).
    func keptPlaylist(of owner: ListOwner) async throws -> KeptPlaylist?
    /// Every owner's weekly playlist.
    func keptPlaylists() async throws -> [KeptPlaylist]
    /// Keeps `owner`'s weekly playlist of `yearsAgo` years back (queued at
    /// the runner's next look), or, with nil, keeps none: its job is
    /// deleted with it, so a run under way writes nothing more. False when
    /// `owner` has no server.
    @discardableResult
    func keepPlaylist(yearsAgo: Int?, of owner: ListOwner, at now: Date) async throws -> Bool
    /// Queues `owner`'s refresh for `week` unless that week was queued
    /// already (once, however many instances of a fleet ask): the week is
    /// marked and the job queued in one transaction. True when queued.
    func queueKeptPlaylist(of owner: ListOwner, week: Int64, at now: Date) async throws -> Bool
    /// The server and the playlist a claimed refresh is for, read under
    /// its claim: nil when the job is no longer held, or the playlist is
    /// no longer kept.
    func begin(_ claim: JobClaim) async throws -> (server: MusicServerSetting, kept: KeptPlaylist)?
    /// Notes what a run did, for Settings, under its claim (nothing is
    /// written once the job is gone). False when it was not held.
    func note(_ note: String, of claim: JobClaim, at now: Date) async throws -> Bool
}
