import Foundation
import VinylogueCore

/// Everything personal and shareable a store holds, as rows: what `vinylogue db copy`
/// reads from one store and writes into another.
public enum PersonalData {
    /// An account as stored, with Last.fm's session key.
    public struct AccountRow: Sendable {
        public let id: Int64
        public let nameKey: String
        public let name: String
        public let lastFMSessionKey: String
        public let createdAt: Date
        public let signedInAt: Date
        /// Who may see the account's listening (`Visibility`'s raw value).
        public let visibility: String

        public init(id: Int64, nameKey: String, name: String, lastFMSessionKey: String, createdAt: Date, signedInAt: Date,
                    visibility: String = Visibility.everyone.rawValue) {
            self.id = id
            self.nameKey = nameKey
            self.name = name
            self.lastFMSessionKey = lastFMSessionKey
            self.createdAt = createdAt
            self.signedInAt = signedInAt
            self.visibility = visibility
        }
    }

    /// A person's choice of how their albums group (`AlbumChoices`).
    public struct AlbumFoldingRow: Sendable, Hashable {
        public let nameKey: String
        public let foldsEditions: Bool
        public let version: Int64

        public init(nameKey: String, foldsEditions: Bool, version: Int64) {
            self.nameKey = nameKey
            self.foldsEditions = foldsEditions
            self.version = version
        }
    }

    /// One choice about a single album (`AlbumChoice`), with whose it is.
    public struct AlbumChoiceRow: Sendable, Hashable {
        public let nameKey: String
        public let choice: AlbumChoice

        public init(nameKey: String, choice: AlbumChoice) {
            self.nameKey = nameKey
            self.choice = choice
        }
    }

    public struct SettingRow: Sendable {
        public let owner: Int64
        public let key: String
        public let value: String

        public init(owner: Int64, key: String, value: String) {
            self.owner = owner
            self.key = key
            self.value = value
        }
    }

    public struct SessionRow: Sendable {
        public let tokenDigest: String
        public let accountID: Int64
        public let createdAt: Date
        public let expiresAt: Date

        public init(tokenDigest: String, accountID: Int64, createdAt: Date, expiresAt: Date) {
            self.tokenDigest = tokenDigest
            self.accountID = accountID
            self.createdAt = createdAt
            self.expiresAt = expiresAt
        }
    }

    /// A listen-submission token's digest and whose it is.
    public struct ListenTokenRow: Sendable {
        public let owner: Int64
        public let tokenDigest: String
        public let createdAt: Date
        /// Its sealed `/2.0/` sign-in verifier (opens only with the same key).
        public var mobileVerifier: String? = nil

        public init(owner: Int64, tokenDigest: String, createdAt: Date, mobileVerifier: String? = nil) {
            self.owner = owner
            self.tokenDigest = tokenDigest
            self.createdAt = createdAt
            self.mobileVerifier = mobileVerifier
        }
    }

    /// An owner's forwarding choices as stored (the ListenBrainz token included:
    /// forwarding must go on from the new database).
    /// An owner's music server, its password with it (`db copy` moves the
    /// server's secrets as it moves the rest; "Download everything" never
    /// carries this row).
    public struct MusicServerRow: Sendable {
        public let owner: Int64
        public let setting: MusicServerSetting
        /// The years back of the weekly playlist kept there; nil for none.
        public let keepsYearsAgo: Int?
        public let updatedAt: Date

        public init(owner: Int64, setting: MusicServerSetting, keepsYearsAgo: Int? = nil, updatedAt: Date) {
            self.owner = owner
            self.setting = setting
            self.keepsYearsAgo = keepsYearsAgo
            self.updatedAt = updatedAt
        }
    }

    public struct ForwardingRow: Sendable {
        public let owner: Int64
        public let toLastFM: Bool
        public let listenBrainzToken: String?
        public let listenBrainzUser: String?
        public let updatedAt: Date

        public init(owner: Int64, toLastFM: Bool, listenBrainzToken: String?, listenBrainzUser: String?, updatedAt: Date) {
            self.owner = owner
            self.toLastFM = toLastFM
            self.listenBrainzToken = listenBrainzToken
            self.listenBrainzUser = listenBrainzUser
            self.updatedAt = updatedAt
        }
    }

    /// A row of the forwarding outbox as stored; one claimed when copied
    /// comes over waiting and uncertain (its send may have arrived).
    public struct OutboxRow: Sendable {
        public let id: Int64
        public let owner: Int64
        public let target: Int
        public let listen: ListenToForward
        public let state: Int
        public let attempts: Int
        public let uncertain: Bool
        public let dueAt: Date
        public let reason: String?
        public let receivedAt: Date
        public let sentAt: Date?

        public init(id: Int64, owner: Int64, target: Int, listen: ListenToForward, state: Int, attempts: Int, uncertain: Bool, dueAt: Date, reason: String?, receivedAt: Date, sentAt: Date?) {
            self.id = id
            self.owner = owner
            self.target = target
            self.listen = listen
            self.state = state
            self.attempts = attempts
            self.uncertain = uncertain
            self.dueAt = dueAt
            self.reason = reason
            self.receivedAt = receivedAt
            self.sentAt = sentAt
        }
    }

    public struct ResponseRow: Sendable {
        public let key: String
        public let body: Data
        public let storedAt: Date
        public let expiresAt: Date

        public init(key: String, body: Data, storedAt: Date, expiresAt: Date) {
            self.key = key
            self.body = body
            self.storedAt = storedAt
            self.expiresAt = expiresAt
        }
    }

    /// A remembered album cover as stored (`address` nil: no cover).
    public struct CoverRow: Sendable {
        public let artistKey: String
        public let albumKey: String
        public let artist: String
        public let album: String
        public let address: String?
        public let resolvedAt: Date

        public init(artistKey: String, albumKey: String, artist: String, album: String, address: String?, resolvedAt: Date) {
            self.artistKey = artistKey
            self.albumKey = albumKey
            self.artist = artist
            self.album = album
            self.address = address
            self.resolvedAt = resolvedAt
        }
    }

    /// A person in the scrobble archive, with their unfinished sync and the
    /// demo's generation mark, if any.
    public struct ArchivedPerson: Sendable {
        public let name: Username
        public let scrobbles: Int
        public let pendingSync: SyncState?
        /// (seed, first week, generated through) of a generated history.
        public let generated: (seed: Int64, firstWeek: Int64, through: Int64)?

        public init(name: Username, scrobbles: Int, pendingSync: SyncState?, generated: (seed: Int64, firstWeek: Int64, through: Int64)?) {
            self.name = name
            self.scrobbles = scrobbles
            self.pendingSync = pendingSync
            self.generated = generated
        }
    }
}
