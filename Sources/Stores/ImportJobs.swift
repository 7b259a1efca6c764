import Foundation
import VinylogueCore

/// An export uploaded on the web, waiting to be imported or imported: one
/// row per upload. The file itself waits on the disk of the instance that
/// received it (`machine`), which alone imports it.
public struct ImportJob: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        case queued, importing, done, failed
    }

    public let id: Int64
    /// Whose list and settings it was uploaded from.
    public let owner: ListOwner
    /// Whose archive it goes into.
    public let user: Username
    /// The file's own name, as the person chose it (shown, never used as a path).
    public let fileName: String
    /// Where the upload waits on `machine`'s disk.
    public let path: String
    public let bytes: Int64
    public let machine: String
    public var state: State
    /// What the import did, member by member, as the command line says it.
    public var summary: String?
    /// Why it failed, in words for the person.
    public var reason: String?
    public var queuedAt: Date
    public var updatedAt: Date

    public init(id: Int64, owner: ListOwner, user: Username, fileName: String, path: String, bytes: Int64, machine: String,
                state: State, summary: String? = nil, reason: String? = nil, queuedAt: Date, updatedAt: Date) {
        self.id = id
        self.owner = owner
        self.user = user
        self.fileName = fileName
        self.path = path
        self.bytes = bytes
        self.machine = machine
        self.state = state
        self.summary = summary
        self.reason = reason
        self.queuedAt = queuedAt
        self.updatedAt = updatedAt
    }

    public var isUnfinished: Bool { state == .queued || state == .importing }
}

/// Uploaded exports as durable jobs: queued, claimed with a lease by a
/// worker of the machine holding the file (taken over when the worker
/// died), done with the importer's summary, or failed with a reason. An
/// import taken over runs again from the start: the archive's duplicate
/// rule makes a second run store nothing twice.
public protocol ImportJobStore: Sendable {
    /// Queues an upload; returns it with its id.
    func queue(owner: ListOwner, user: Username, fileName: String, path: String, bytes: Int64, machine: String,
               at now: Date) async throws -> ImportJob
    /// Claims, for `lease` seconds as `holder`, the upload of `machine`
    /// queued longest ago, or one whose worker's lease ran out or whose
    /// worker `isGone` says has stopped; nil when none waits.
    func claimNext(on machine: String, as holder: String, at now: Date, lease: TimeInterval,
                   takingOverFrom isGone: @Sendable (String) -> Bool) async throws -> ImportJob?
    /// Renews the claim; false when it is no longer `holder`'s.
    func renew(_ id: Int64, as holder: String, at now: Date, lease: TimeInterval) async throws -> Bool
    /// Ends the claimed import: done with `summary`, or failed with `reason`.
    func finish(_ id: Int64, as holder: String, summary: String?, failure reason: String?, at now: Date) async throws -> Bool
    /// `owner`'s uploads, the newest first, at most `limit`.
    func jobs(of owner: ListOwner, limit: Int) async throws -> [ImportJob]
    /// How many uploads on `machine` wait to be imported or are being imported.
    func waiting(on machine: String) async throws -> Int
}
