import Foundation
import Synchronization
import VinylogueCore

/// A change to what a person's pages show.
public enum ListeningChange: Sendable, Hashable {
    /// Their listens: a player's, an import's, a copy's, or what a copy
    /// stored forgotten.
    case listens(Username)
    /// Who may see them (their choice, a list naming them).
    case audience(Username)
    /// Their account and everything of it are gone.
    case erased(Username)
    /// Anything may have changed for anyone (the fleet's notices were missed).
    case anything

    /// The person it is about; nil for `anything`.
    public var person: Username? {
        switch self {
        case .listens(let person), .audience(let person), .erased(let person): person
        case .anything: nil
        }
    }

    /// How the fleet's other instances hear of it; nil for what an instance
    /// only ever tells itself.
    public var notice: FleetNotice? {
        switch self {
        case .listens(let person): .listensChanged(user: person.value)
        case .audience(let person): .audienceChanged(user: person.value)
        case .erased(let person): .erased(user: person.value)
        case .anything: nil
        }
    }

    /// The change a fleet notice tells of; nil for one that changes no
    /// page (what is playing now) or names no valid person.
    public init?(_ notice: FleetNotice) {
        switch notice {
        case .listensChanged(let name): guard let person = Username(validating: name) else { return nil }; self = .listens(person)
        case .audienceChanged(let name): guard let person = Username(validating: name) else { return nil }; self = .audience(person)
        case .erased(let name): guard let person = Username(validating: name) else { return nil }; self = .erased(person)
        case .listeningAgain: self = .anything
        case .playingNow: return nil
        }
    }
}

/// What keeps views made from people's listening (the web's kept pages,
/// cards and widgets), and so must forget them when they change.
public protocol ListeningFollower: Sendable {
    /// Forgets at once, in memory, what `change` made out of date: it must
    /// not wait, so a page asked after a write's answer never shows the
    /// listening from before it.
    func forget(_ change: ListeningChange)
    /// Then what takes longer (files on disk).
    func tidy(after change: ListeningChange) async
}

extension ListeningFollower {
    public func tidy(after change: ListeningChange) async {}
}

/// The one stream of changes to what people's pages show. Every writer
/// announces here — the listen write, uploads' imports, history copies,
/// visibility, deletion — and so do the fleet's notices; what keeps views
/// of people follows it, and nothing else forgets a kept view.
public final class ListeningChanges: Sendable {
    /// The fleet's other instances, told of a change made here (nil on a
    /// single server).
    let notices: (any FleetNotices)?
    private let followers = Mutex<[any ListeningFollower]>([])

    public init(notices: (any FleetNotices)?) {
        self.notices = notices
    }

    /// Adds what must forget from now on.
    public func follow(_ follower: any ListeningFollower) {
        followers.withLock { $0.append(follower) }
    }

    /// A change made here: followers forget it, then tidy, and the fleet's
    /// other instances are told — unless `fleetTold` (the write's own
    /// transaction announced it).
    public func changed(_ change: ListeningChange, fleetTold: Bool = false) async {
        let followers = self.followers.withLock { $0 }
        for follower in followers { follower.forget(change) }
        for follower in followers { await follower.tidy(after: change) }
        if !fleetTold, let notice = change.notice { await notices?.announce(notice) }
    }

    /// A change another instance made, heard as its notice: followers
    /// forget at once; returns the change, for its `tidy`, or nil when the
    /// notice changes no page.
    @discardableResult
    public func heard(_ notice: FleetNotice) -> ListeningChange? {
        guard let change = ListeningChange(notice) else { return nil }
        for follower in followers.withLock({ $0 }) { follower.forget(change) }
        return change
    }

    /// What followers do after forgetting a change they heard of.
    public func tidy(after change: ListeningChange) async {
        for follower in followers.withLock({ $0 }) { await follower.tidy(after: change) }
    }
}
