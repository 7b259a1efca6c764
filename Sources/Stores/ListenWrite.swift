import Foundation
import VinylogueCore

/// Who sent listens to keep (`ReceivedListenStore.keep(_:)`).
public enum ListenFrom: Sendable {
    /// Known already (a session's account, the household).
    case known(ListenSender)
    /// Read from the token's holder in the write's own transaction: nil
    /// from `sender` (no such token, or a holder that may not send them)
    /// stores nothing.
    case token(digest: String, sender: @Sendable (ListenTokenHolder?) -> ListenSender?)
}

/// One submission of received listens: what a player sent, who sent it,
/// the services the server can forward to, and when it arrived.
public struct ListenKeep: Sendable {
    public let listens: [ListenToForward]
    public let from: ListenFrom
    /// The services this server forwards to; the owner's choice is read
    /// in the write.
    public let available: Set<ForwardingTarget>
    public let now: Date

    public init(_ listens: [ListenToForward], from: ListenFrom, forwardingAmong available: Set<ForwardingTarget>, at now: Date) {
        self.listens = listens
        self.from = from
        self.available = available
        self.now = now
    }
}

/// The write of received listens, in its one order, for one submission or
/// for several that share one transaction (`PostgresListenGroups`):
///
/// 1. the tokens' holders are read, and so whom each submission is for (a
///    token replaced before the transaction commits stores nothing);
/// 2. the owners' forwarding choices are read, and their forwarding jobs
///    queued, before any person's archive lock (PostgreSQL: the order in
///    which the eraser and a forwarding job's own writes take them);
/// 3. the people's archive rows are found or made, their locks taken (in
///    the order of their ids, where a backend locks);
/// 4. the listens are stored by the duplicate rule with their kept weekly
///    charts (the archive's one write, `ArchiveWriting.store`), in rounds
///    in which each person appears once, in the order sent;
/// 5. the fleet is told whose listens changed (heard when it commits);
/// 6. the outbox rows are written, one per listen and service.
///
/// A backend runs it inside its one transaction: it asks `next()` for the
/// step, carries it out in its own SQL, gives back what the step reads
/// (`heard`), and asks again, until `.finished`. The steps are values, not
/// calls, so the same order drives SQLite's synchronous writes (inside
/// GRDB's writer, where nothing may be awaited) and PostgreSQL's
/// asynchronous ones. A step that has nothing to do is skipped.
public struct ListenWrite: Sendable {
    /// What the backend does next.
    public enum Step: Sendable {
        /// Read the holders of these tokens' digests; answer `heard(holders:)`.
        case readHolders(tokens: Set<String>)
        /// Read these owners' forwarding choices; answer `heard(choices:)`.
        case readChoices(owners: Set<ListOwner>)
        /// Queue these forwarding jobs, or bring their due time forward.
        /// A backend whose outbox queues a job with the rows it adds (one
        /// writer, no lock order to keep: SQLite) may do nothing here.
        case queueJobs(Set<ForwardingJob>, at: Date)
        /// Find or make these people's archive rows, taking their write
        /// locks; answer `heard(ids:)` by name key.
        case findPeople([Username])
        /// Store each batch for its person by the duplicate rule, with the
        /// kept weekly charts; each person appears once.
        case store([(userID: Int64, batch: [(Scrobble, ScrobbleOrigin)])])
        /// Tell the fleet's other instances when the transaction commits
        /// (a single server, which has none, does nothing).
        case announce([FleetNotice])
        /// Write the outbox rows of each entry (the listens, to each of the
        /// targets); answer `heard(queued:)` with how many each added.
        case enqueue([(listens: [ListenToForward], owner: ListOwner, targets: Set<ForwardingTarget>)], at: Date)
        /// Done: for each submission, whom its listens were for and how
        /// many outbox rows they added, or nil when nothing was stored.
        case finished([KeptListens?])
    }

    private enum Stage { case holders, choices, jobs, people, storing, announce, enqueue, finished }

    private let keeps: [ListenKeep]
    private var stage = Stage.holders
    private var senders: [ListenSender?] = []
    /// The submissions with a sender and listens, in the order sent.
    private var storing: [Int] = []
    /// Of those, the ones the server could forward, with their owner's targets.
    private var forwarding: [(index: Int, targets: Set<ForwardingTarget>)] = []
    private var ids: [String: Int64] = [:]
    /// The submissions not stored yet.
    private var left: [Int] = []
    private var answers: [KeptListens?] = []

    public init(_ keeps: [ListenKeep]) {
        self.keeps = keeps
    }

    /// The next step to carry out.
    public mutating func next() -> Step {
        while true {
            switch stage {
            case .holders:
                var digests = Set<String>()
                for keep in keeps { if case .token(let digest, _) = keep.from { digests.insert(digest) } }
                guard !digests.isEmpty else { heard(holders: [:]); continue }
                return .readHolders(tokens: digests)
            case .choices:
                guard !forwarding.isEmpty else { heard(choices: [:]); continue }
                return .readChoices(owners: Set(forwarding.map { senders[$0.index]!.owner }))
            case .jobs:
                stage = .people
                let jobs = forwarding.flatMap { index, targets in targets.map { ForwardingJob(owner: senders[index]!.owner, target: $0) } }
                guard !jobs.isEmpty else { continue }
                return .queueJobs(Set(jobs), at: keeps[0].now)
            case .people:
                guard !storing.isEmpty else { heard(ids: [:]); continue }
                return .findPeople(storing.map { senders[$0]!.user })
            case .storing:
                guard !left.isEmpty else { stage = .announce; continue }
                // A round in which each person appears once, in the order sent.
                var people = Set<Int64>(), round: [Int] = [], later: [Int] = []
                for index in left {
                    if people.insert(ids[senders[index]!.user.key]!).inserted { round.append(index) } else { later.append(index) }
                }
                left = later
                return .store(round.map { index in
                    (ids[senders[index]!.user.key]!, keeps[index].listens.map { ($0.scrobble, ScrobbleOrigin.received) })
                })
            case .announce:
                stage = .enqueue
                let people = Set(storing.map { senders[$0]!.user.value }).sorted()
                guard !people.isEmpty else { continue }
                return .announce(people.map { FleetNotice.listensChanged(user: $0) })
            case .enqueue:
                guard !forwarding.isEmpty else { heard(queued: []); continue }
                return .enqueue(forwarding.map { index, targets in (keeps[index].listens, senders[index]!.owner, targets) }, at: keeps[0].now)
            case .finished:
                return .finished(answers)
            }
        }
    }

    /// The holders of the tokens `readHolders` named, by digest (a token
    /// with none is left out).
    public mutating func heard(holders: [String: ListenTokenHolder]) {
        precondition(stage == .holders)
        senders = keeps.map { keep in
            switch keep.from {
            case .known(let sender): sender
            case .token(let digest, let sender): sender(holders[digest])
            }
        }
        storing = keeps.indices.filter { senders[$0] != nil && !keeps[$0].listens.isEmpty }
        left = storing
        answers = senders.map { $0.map { KeptListens(sender: $0, queued: 0) } }
        forwarding = storing.filter { !keeps[$0].available.isEmpty }.map { ($0, []) }
        stage = .choices
    }

    /// The forwarding choices of the owners `readChoices` named.
    public mutating func heard(choices: [ListOwner: ForwardingChoice]) {
        precondition(stage == .choices)
        forwarding = forwarding.map { index, _ in
            (index, (choices[senders[index]!.owner]?.targets ?? []).intersection(keeps[index].available))
        }
        stage = .jobs
    }

    /// The archive ids of the people `findPeople` named, by name key.
    public mutating func heard(ids: [String: Int64]) {
        precondition(stage == .people)
        self.ids = ids
        stage = .storing
    }

    /// How many outbox rows each entry of `enqueue` added, in its order.
    public mutating func heard(queued: [Int]) {
        precondition(stage == .enqueue)
        for (n, entry) in forwarding.enumerated() where n < queued.count {
            answers[entry.index] = KeptListens(sender: senders[entry.index]!, queued: queued[n])
        }
        stage = .finished
    }
}
