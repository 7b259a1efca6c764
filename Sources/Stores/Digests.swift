import Foundation
import VinylogueCore

/// Where and when a person's weekly digest ("this week, years ago") goes:
/// one per owner (an account, or the household's "me").
public struct DigestSubscription: Sendable, Hashable {
    public let owner: ListOwner
    /// The address as the person typed it (checked before it is kept).
    public var address: String
    /// The day it goes out: 1 = Sunday … 7 = Saturday (`Calendar`'s).
    public var weekday: Int
    /// The hour it goes out, 0–23, in the person's time zone.
    public var hour: Int
    /// How many years back it shows (1 to `DigestSubscription.maxYears`).
    public var years: Int
    /// The secret in the links that confirm the address and unsubscribe
    /// from it (a new one whenever the address changes, so an old link
    /// never confirms a new address). Never shown on a page or logged.
    public var token: String
    /// When the address was confirmed; nothing but the confirmation goes
    /// out before.
    public var confirmedAt: Date?
    public var updatedAt: Date

    public static let maxYears = 10
    public static let weekdays = 1...7
    public static let hours = 0...23

    public init(owner: ListOwner, address: String, weekday: Int, hour: Int, years: Int, token: String, confirmedAt: Date?, updatedAt: Date) {
        self.owner = owner
        self.address = address
        self.weekday = weekday
        self.hour = hour
        self.years = years
        self.token = token
        self.confirmedAt = confirmedAt
        self.updatedAt = updatedAt
    }

    public var isConfirmed: Bool { confirmedAt != nil }
}

/// One email of the send queue.
public struct DigestSend: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The weekly digest; its key is the person's ISO week it was due in ("2026-W48").
        case weekly
        /// "Send me this week's digest now"; its key is when it was asked.
        case now
        /// The link that confirms an address; its key names the address's
        /// token and when it was asked.
        case confirmation
    }

    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Due at `dueAt` (again, after a failure: `reason` says why).
        case waiting
        /// Its job is claimed by a sender.
        case sending
        /// The mail server took it.
        case sent
        /// Not sent, and rightly so (`reason`): nothing to show that week,
        /// the person unsubscribed, or the address changed.
        case skipped
        /// Given up on after its tries (`reason`: the mail server's words).
        case failed
    }

    public let id: Int64
    public let owner: ListOwner
    public let kind: Kind
    public let key: String
    /// Where it goes, as the subscription said when it was queued.
    public let address: String
    public var state: State
    /// Tries so far (its job's runs begun, a run stopped with the server not counted).
    public var attempts: Int
    public var dueAt: Date
    public var reason: String?
    public var queuedAt: Date
    public var sentAt: Date?

    public init(id: Int64, owner: ListOwner, kind: Kind, key: String, address: String, state: State, attempts: Int, dueAt: Date,
                reason: String?, queuedAt: Date, sentAt: Date?) {
        self.id = id
        self.owner = owner
        self.kind = kind
        self.key = key
        self.address = address
        self.state = state
        self.attempts = attempts
        self.dueAt = dueAt
        self.reason = reason
        self.queuedAt = queuedAt
        self.sentAt = sentAt
    }
}

/// What came of one claimed email, written to its row and its job in one
/// transaction (`DigestStore.end`), so Settings shows what the queue did.
public enum DigestOutcome: Sendable, Hashable {
    /// The mail server took it (`note`: taken, it is thought, though its
    /// answer was lost).
    case sent(note: String?)
    /// Not sent, and rightly so.
    case skipped(reason: String)
    /// Given up on (the mail server's words).
    case failed(reason: String)
    /// Not now: waiting again until `at`.
    case retry(at: Date, reason: String)
    /// Handed back as it was, the try not counted: the server is stopping.
    case stopped

    /// The row's state after it.
    public var state: DigestSend.State {
        switch self {
        case .sent: .sent
        case .skipped: .skipped
        case .failed: .failed
        case .retry, .stopped: .waiting
        }
    }

    /// The reason the row shows after it (nil: the one it had stays, for `stopped`).
    public var reason: String? {
        switch self {
        case .sent(let note): note
        case .skipped(let reason), .failed(let reason), .retry(_, let reason): reason
        case .stopped: nil
        }
    }

    /// How its job ends: a skipped email is done with, as a sent one is.
    public var ending: JobEnding {
        switch self {
        case .sent, .skipped: .done
        case .failed(let reason): .failed(reason: reason)
        case .retry(let at, let reason): .retry(at: at, reason: reason)
        case .stopped: .stopped
        }
    }
}

/// Digest subscriptions and the emails sent for them.
/// `SQLiteDigestStore` and `PostgresDigestStore` play it; one contract
/// test runs against both.
///
/// An email is a `digest_send` row (what it is and what came of it, for
/// Settings), queued once per owner, kind and key (a second queueing of
/// the same week's digest, by this instance or another of a fleet, adds
/// nothing) with its `JobKind.digest` job in the same transaction; the job
/// queue claims it (one sender at a time, taken over when its sender
/// died). Its row is ended with its job, in one transaction that checks the
/// job is still held: an email whose job was deleted (its account erased)
/// records nothing.
public protocol DigestStore: Sendable {
    func subscription(of owner: ListOwner) async throws -> DigestSubscription?
    /// The subscription a link's `token` belongs to.
    func subscription(token: String) async throws -> DigestSubscription?
    /// Keeps `owner`'s address and schedule. The same address (in any
    /// case) keeps its token and confirmation; another one takes `newToken`
    /// and waits for confirmation again (what waited for the old one is
    /// skipped, its jobs deleted).
    func save(_ owner: ListOwner, address: String, weekday: Int, hour: Int, years: Int, newToken: String,
              at now: Date) async throws -> DigestSubscription
    /// Confirms the address `token` was sent to; nil when no subscription
    /// has that token (an old link, or one that was unsubscribed).
    func confirm(token: String, at now: Date) async throws -> DigestSubscription?
    /// Ends `owner`'s subscription; its waiting emails are skipped (their
    /// jobs deleted). Returns whether there was one.
    @discardableResult
    func remove(_ owner: ListOwner, reason: String, at now: Date) async throws -> Bool
    /// Every confirmed subscription, for the schedule.
    func confirmedSubscriptions() async throws -> [DigestSubscription]

    /// Queues an email due at `due`, with its job (its person the owner's
    /// account's name key, the household's ""), unless one of that owner,
    /// kind and key is there already; returns whether this queued it.
    @discardableResult
    func queue(_ owner: ListOwner, kind: DigestSend.Kind, key: String, address: String, due: Date, at now: Date) async throws -> Bool
    /// Starts the email whose job the runner claimed: its row says
    /// sending, its tries counted as the job's. Nil when the job is no
    /// longer `job`'s, or its row is gone or no longer waits (skipped).
    func begin(_ job: JobClaim, at now: Date) async throws -> DigestSend?
    /// Writes what came of the claimed email to its row and ends its job
    /// accordingly, in one transaction; false (nothing written) when the
    /// job is no longer `job`'s (deleted with its account, or taken over).
    @discardableResult
    func end(_ job: JobClaim, as outcome: DigestOutcome, at now: Date) async throws -> Bool
    /// `owner`'s emails, the newest first, at most `limit`.
    func sends(of owner: ListOwner, limit: Int) async throws -> [DigestSend]
    /// Deletes the emails that ended (sent, skipped, failed) and were queued
    /// before `date`; returns how many.
    @discardableResult
    func forget(endedBefore date: Date) async throws -> Int
}

/// When weekly digests fall due: pure arithmetic over a person's day,
/// hour and time zone.
public enum DigestSchedule {
    /// How late a weekly digest may still go out (after a server was down
    /// over its hour): a day and a half, so that a reminder never arrives
    /// in the middle of the next week.
    public static let grace: TimeInterval = 36 * 3600

    /// The latest instant at or before `now` that falls on `weekday` at
    /// `hour` in `timeZone` (an hour a clock change skips is taken as the
    /// first instant after it).
    public static func latestSlot(weekday: Int, hour: Int, in timeZone: TimeZone, atOrBefore now: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let today = calendar.startOfDay(for: now)
        for back in 0...7 {
            guard let day = calendar.date(byAdding: .day, value: -back, to: today),
                  calendar.component(.weekday, from: day) == weekday,
                  let slot = calendar.date(bySettingHour: hour, minute: 0, second: 0, of: day, matchingPolicy: .nextTime,
                                           repeatedTimePolicy: .first, direction: .forward),
                  slot <= now else { continue }
            return slot
        }
        // Unreachable: one of the last eight days is `weekday`, and a week
        // ago's hour has passed.
        return now.addingTimeInterval(-7 * 86400)
    }

    /// The weekly key of a slot: its ISO week in `timeZone`, "2026-W48".
    /// One digest a week: a day changed after this week's went out waits
    /// for next week.
    public static func key(of slot: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: slot)
        return String(format: "%04d-W%02d", parts.yearForWeekOfYear ?? 0, parts.weekOfYear ?? 0)
    }

    /// The weekly digest `subscription` owes at `now`, if any: its latest
    /// slot, when that is after the address was confirmed and no more than
    /// `grace` ago.
    public static func due(_ subscription: DigestSubscription, in timeZone: TimeZone, at now: Date) -> (slot: Date, key: String)? {
        guard let confirmed = subscription.confirmedAt else { return nil }
        let slot = latestSlot(weekday: subscription.weekday, hour: subscription.hour, in: timeZone, atOrBefore: now)
        guard slot >= confirmed, now.timeIntervalSince(slot) <= grace else { return nil }
        return (slot, key(of: slot, in: timeZone))
    }

    /// The next slot after `now` (for "the next one goes out on …").
    public static func nextSlot(weekday: Int, hour: Int, in timeZone: TimeZone, after now: Date) -> Date {
        // The latest slot a week and a second from now is the next one.
        let later = latestSlot(weekday: weekday, hour: hour, in: timeZone, atOrBefore: now.addingTimeInterval(7 * 86400))
        return later > now ? later : later.addingTimeInterval(7 * 86400)
    }
}
