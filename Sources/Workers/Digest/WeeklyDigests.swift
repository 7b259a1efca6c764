import Foundation
import LastFM
import Logging
import Mail
import Stores
import Sync
import Synchronization
import VinylogueCore

/// Sends mail; `SMTPClient` in production, a recorder in tests.
public protocol MailDelivery: Sendable {
    func send(_ message: MailMessage) async throws(MailFailure)
}

extension SMTPClient: MailDelivery {}

/// The weekly digest, as the handler of the one job queue's emails
/// (`JobKind.digest`): at each of the runner's looks it queues each
/// confirmed person's digest when their day and hour come (in their own
/// time zone); it sends the emails the runner claims: digests, "send it
/// now", and confirmation links.
///
/// Each email's job is claimed with a lease by one runner of the fleet, so
/// none goes twice; a sender killed mid-send leaves its job to be taken
/// over (at once by the next start on its machine, `JobHolder`) and the
/// email is sent by the next (the mail server drops a message whose
/// sender vanished before the end of `DATA`). A refusal the server calls
/// temporary, a timeout or a lost connection is tried again with
/// `retries`' backoff (a minute, doubling to six hours, ten tries); a
/// permanent one fails at once. Either way Settings shows the server's
/// words: the email's row is written with its job's end, in one
/// transaction that finds nothing to write once its account was erased. A
/// connection lost after the whole message was sent, before the server
/// said it took it, counts as sent (with a note): sending again could
/// deliver it twice.
public final class WeeklyDigests: JobHandler, Sendable {
    package let store: any DigestStore
    package let mail: any MailDelivery
    /// The sender's address and name.
    package let from: MailAddress
    /// Writes the emails (the web app's templates and addresses).
    package let letters: any DigestLetters
    /// The settings an owner chose (their time zone, their play-count filter).
    package let preferences: @Sendable (ListOwner) async -> Settings
    package let sources: ListeningSources
    /// Whose listening an owner's digest shows: the account's name, or the
    /// household's "me"; nil when there is none.
    package let person: @Sendable (ListOwner) async -> Username?
    /// The weekly playlist an owner's music server keeps, if any.
    package let keptPlaylist: @Sendable (ListOwner) async -> KeptPlaylist?
    /// An album's cover, when it has one (`nil` otherwise or on failure).
    package let cover: @Sendable (Username, ChartEntry) async -> (contentType: String, bytes: Data)?
    package let clock: WallClock
    package let logger: Logger
    /// Tells the job runner an email is queued.
    package let queued: Wakeup
    /// When ended emails were last forgotten.
    private let forgotten = Mutex(Date.distantPast)
    /// How long ended emails are listed on Settings before they are forgotten.
    package static let keptFor: TimeInterval = 90 * 86400
    /// When an email not sent for now is tried again.
    package static let retries = RetrySchedule(first: 60, longest: 6 * 3600, tries: 10)
    /// The lease of the command line's own claim, renewed every third of
    /// it while the email is written and sent (as the runner renews its
    /// jobs'): a command killed mid-send leaves its email to a server within
    /// two minutes.
    package static let ownLease: TimeInterval = 120
    /// How long writing one email may wait for its charts and covers (a
    /// person charted from Last.fm while Last.fm is slow).
    package static let writingPatience: Duration = .seconds(120)
    /// Rows each year shows.
    package static let rowsPerYear = 5

    package init(store: any DigestStore, mail: any MailDelivery, from: MailAddress, letters: any DigestLetters,
                preferences: @escaping @Sendable (ListOwner) async -> Settings,
         sources: ListeningSources, person: @escaping @Sendable (ListOwner) async -> Username?,
         keptPlaylist: @escaping @Sendable (ListOwner) async -> KeptPlaylist? = { _ in nil },
         cover: @escaping @Sendable (Username, ChartEntry) async -> (contentType: String, bytes: Data)?,
         clock: WallClock, queued: Wakeup, logger: Logger = Logger(label: "vinylogue.digests")) {
        self.store = store
        self.mail = mail
        self.from = from
        self.letters = letters
        self.preferences = preferences
        self.sources = sources
        self.person = person
        self.keptPlaylist = keptPlaylist
        self.cover = cover
        self.clock = clock
        self.queued = queued
        self.logger = logger
    }

    public var kind: JobKind { .digest }

    // MARK: Queueing

    /// Queues the link that confirms `subscription`'s address, and wakes
    /// the sender: once per address (its token) and minute, so a double
    /// click sends one, and a changed address its own.
    package func queueConfirmation(of subscription: DigestSubscription) async throws {
        try await store.queue(subscription.owner, kind: .confirmation, key: String(subscription.token.prefix(16)) + "@" + Self.minute(clock.now),
                              address: subscription.address, due: clock.now, at: clock.now)
        queued.signal()
    }

    /// Queues this week's digest now ("send me this week's digest now");
    /// asked twice in one minute, it goes once (`key`, by default the
    /// minute). Returns whether it was queued.
    @discardableResult
    package func queueNow(of subscription: DigestSubscription, key: String? = nil) async throws -> Bool {
        let queued = try await store.queue(subscription.owner, kind: .now, key: key ?? Self.minute(clock.now), address: subscription.address,
                                           due: clock.now, at: clock.now)
        self.queued.signal()
        return queued
    }

    /// Queues the weekly digest of each confirmed person whose day and hour
    /// have come (once per week, however many instances ask). Returns how
    /// many were new.
    @discardableResult
    public func queueOwed() async -> Int {
        let now = clock.now
        let subscriptions: [DigestSubscription]
        do {
            subscriptions = try await store.confirmedSubscriptions()
        } catch {
            logger.warning("could not read the digest subscriptions: \(error)")
            return 0
        }
        var queued = 0
        for subscription in subscriptions {
            let zone = await preferences(subscription.owner).timeZone
            guard let owed = DigestSchedule.due(subscription, in: zone, at: now) else { continue }
            do {
                if try await store.queue(subscription.owner, kind: .weekly, key: owed.key, address: subscription.address, due: owed.slot,
                                         at: now) { queued += 1 }
            } catch {
                logger.warning("could not queue a weekly digest: \(error)")
            }
        }
        return queued
    }

    /// Confirmation links an owner may be sent in an hour, whichever
    /// addresses they are for: they go to addresses nobody has confirmed.
    package static let confirmationsPerHour = 3

    /// When `owner` may be sent another confirmation link: nil when now,
    /// else when the oldest of the last hour's links turns an hour old.
    package func nextConfirmationAllowed(for owner: ListOwner) async throws -> Date? {
        let hourAgo = clock.now.addingTimeInterval(-3600)
        let recent = try await store.sends(of: owner, limit: 20).filter { $0.kind == .confirmation && $0.queuedAt > hourAgo }
            .map(\.queuedAt).sorted(by: >)
        guard recent.count >= Self.confirmationsPerHour else { return nil }
        return recent[Self.confirmationsPerHour - 1].addingTimeInterval(3600)
    }

    /// "2026-11-26T12:34": the key of emails asked for by hand.
    package static func minute(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02dT%02d:%02d", p.year ?? 0, p.month ?? 0, p.day ?? 0, p.hour ?? 0, p.minute ?? 0)
    }

    // MARK: Sending

    /// At each of the runner's looks: queues the weekly digests owed now,
    /// and once an hour forgets old emails.
    public func look(at now: Date) async {
        await queueOwed()
        await forgetOldEmails()
    }

    /// Once an hour, forgets the emails that ended `keptFor` ago.
    package func forgetOldEmails() async {
        let now = clock.now
        guard forgotten.withLock({ last in
            guard now.timeIntervalSince(last) >= 3600 else { return false }
            last = now
            return true
        }) else { return }
        do {
            try await store.forget(endedBefore: now.addingTimeInterval(-Self.keptFor))
        } catch {
            logger.info("could not forget old emails: \(error)")
        }
    }

    /// Writes, sends and records the email whose job the runner claimed
    /// (or the command line did): its row and its job end together.
    public func run(_ claim: JobClaim) async -> JobEnding {
        let send: DigestSend
        do {
            // Nil: skipped (the address changed, or the digest was turned
            // off) or erased before it began; nothing is left to do.
            guard let begun = try await store.begin(claim, at: clock.now) else { return .done }
            send = begun
        } catch {
            return .retry(at: clock.now.addingTimeInterval(Self.retries.first), reason: "The database could not be read: \(error).")
        }
        var outcome = await deliver(send)
        // Stopped with the server before it went: handed back, the try not counted.
        if Task.isCancelled, case .retry = outcome { outcome = .stopped }
        await record(outcome, of: claim, send)
        return outcome.ending
    }

    /// What one claimed email comes to.
    package enum Outcome {
        case letter(DigestLetter, MailAddress, unsubscribe: String?)
        /// Not sent, rightly: the reason.
        case skip(String)
        /// Not now: the reason.
        case later(String)
    }

    /// Writes and sends one claimed email; returns what came of it.
    package func deliver(_ send: DigestSend) async -> DigestOutcome {
        let outcome = await composeInTime(send)
        switch outcome {
        case .skip(let reason):
            return .skipped(reason: reason)
        case .later(let reason):
            return retryOrFail(send, reason: reason)
        case .letter(let letter, let address, let unsubscribe):
            let message = self.message(letter, to: address, send: send, unsubscribe: unsubscribe)
            let failure: MailFailure?
            do throws(MailFailure) {
                try await mail.send(message)
                failure = nil
            } catch {
                failure = error
            }
            guard let failure else {
                logger.info("sent a \(send.kind.rawValue) email (\(send.id))")
                return .sent(note: nil)
            }
            logger.info("a \(send.kind.rawValue) email (\(send.id)) was not sent: \(failure.message)")
            let reason = failure.message + (Self.isTheServersSetting(failure) ? " Whoever runs this Vinylogue must check its mail server settings." : "")
            if failure.mayHaveArrived { return .sent(note: reason + " It is not sent again, so as not to send it twice.") }
            if failure.isPermanent { return .failed(reason: reason) }
            return retryOrFail(send, reason: reason)
        }
    }

    /// Whether `failure` is this server's configuration (its mail server's
    /// address, certificate or sign-in) rather than the recipient's.
    package static func isTheServersSetting(_ failure: MailFailure) -> Bool {
        switch failure {
        case .unreachable, .tls, .authentication, .credentialsNeedEncryption, .authenticationUnavailable: true
        case .refused(let step, _, _): step == .mailFrom || step == .greeting || step == .ehlo || step == .helo
        case .timedOut, .dropped, .unexpectedReply: false
        }
    }

    /// Tried again after `retries`' wait, or failed when its tries are spent.
    package func retryOrFail(_ send: DigestSend, reason: String) -> DigestOutcome {
        guard let wait = Self.retries.wait(after: send.attempts) else {
            return .failed(reason: reason + " Vinylogue tried \(send.attempts) times and stopped.")
        }
        return .retry(at: clock.now.addingTimeInterval(wait), reason: reason)
    }

    /// Writes what came of an email to its row and ends its job, trying
    /// again for about half a minute when the database is busy or away (an
    /// outcome not written leaves the email to be sent again when its
    /// job's lease runs out). In a task of its own: a run stopped with the
    /// server ends in a cancelled task, whose database calls would refuse
    /// to start.
    package func record(_ outcome: DigestOutcome, of claim: JobClaim, _ send: DigestSend) async {
        await Task {
            var wait = Duration.milliseconds(500)
            for attempt in 1...6 {
                do {
                    if try await store.end(claim, as: outcome, at: clock.now) == false {
                        logger.info("email \(send.id) was deleted or taken over while it was sent; nothing is recorded")
                    }
                    return
                } catch {
                    if attempt == 6 {
                        logger.error("could not record what came of email \(send.id) (\(error)); it may go again when its job's lease runs out")
                        return
                    }
                    try? await Task.sleep(for: wait)
                    wait *= 2
                }
            }
        }.value
    }

    /// `compose`, given `writingPatience` at most; its Last.fm requests wait
    /// behind page views, as history copies do.
    package func composeInTime(_ send: DigestSend) async -> Outcome {
        await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await LastFMRequestPriority.$current.withValue(.background) { await self.compose(send) } }
            group.addTask {
                try? await Task.sleep(for: Self.writingPatience)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next().flatMap { $0 }
                ?? .later("Its charts could not be read in time (Last.fm may be slow); it is tried again later.")
        }
    }

    package func compose(_ send: DigestSend) async -> Outcome {
        let kept: DigestSubscription?
        do {
            kept = try await store.subscription(of: send.owner)
        } catch {
            return .later("The database could not be read: \(error).")
        }
        guard let subscription = kept else {
            return .skip("The digest was turned off before it went out.")
        }
        guard subscription.address.lowercased() == send.address.lowercased(), let address = MailAddress(send.address) else {
            return .skip("The address changed before it went out.")
        }
        guard let person = await person(send.owner) else {
            return .skip("There is nobody whose listening it would show: choose who is “me” on the list.")
        }
        if send.kind == .confirmation {
            return .letter(letters.confirmation(of: subscription, person: person), address, unsubscribe: nil)
        }
        guard subscription.isConfirmed else { return .skip("The address was not confirmed.") }
        let chosen = await preferences(send.owner)
        // Only the years the digest shows are read.
        let request = EveryYearPage.Request(user: person, kind: .album, filter: chosen.filter, rowsPerYear: Self.rowsPerYear,
                                            timeZone: chosen.timeZone, yearsBack: subscription.years)
        let charts = await sources.charts(for: person), now = clock.now
        // This week's anniversaries and rituals, for an archived person (the digest stands without them).
        let archive = (charts as? ArchiveChartSource)?.store, zone = chosen.timeZone
        async let found = archive == nil ? nil : try? await archive?.anniversaries(of: person, now: now, timeZone: zone)
        let page = await EveryYearPage.load(request, from: charts, now: now)
        if let failure = page.failure { return .later(failure.message) }
        let years = page.years.filter { $0.yearsAgo <= subscription.years }
        guard !years.isEmpty else {
            return .skip(subscription.years == 1 ? "Nothing to show: there were no albums this week a year ago."
                : "Nothing to show: no albums this week in the last \(subscription.years) years.")
        }
        var covers: [AlbumKey: (contentType: String, bytes: Data)] = [:]
        for row in years.flatMap(\.rows) {
            let key = AlbumKey(artist: row.artist, album: row.name)
            guard covers[key] == nil, let found = await cover(person, row.entry) else { continue }
            covers[key] = found
        }
        let moments = (await found).map { found in
            found.milestones.map(Anniversaries.sentence) + found.rituals.map { found.sentence($0, whose: "\(person.value)’s") }
        } ?? []
        let keptYears = archive == nil ? nil : await keptPlaylist(send.owner)?.yearsAgo
        guard let letter = letters.digest(of: person, years: years, moments: moments, playable: archive != nil, kept: keptYears, subscription: subscription,
                                          timeZone: chosen.timeZone, covers: covers) else {
            return .skip("Nothing to show this week.")
        }
        return .letter(letter, address, unsubscribe: letters.unsubscribeAddress(token: subscription.token))
    }

    package func message(_ letter: DigestLetter, to address: MailAddress, send: DigestSend, unsubscribe: String?) -> MailMessage {
        var headers: [(name: String, value: String)] = [("Auto-Submitted", "auto-generated")]
        if let unsubscribe {
            // RFC 8058: one POST to this address unsubscribes, no sign-in.
            headers.append(("List-Unsubscribe", "<\(unsubscribe)>"))
            headers.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
            headers.append(("List-Id", "Vinylogue weekly digest <digest.vinylogue.\(from.domain)>"))
        }
        var message = MailMessage(from: from, fromName: "Vinylogue", to: address, subject: letter.subject, date: clock.now,
                                  messageID: "<vinylogue.\(send.kind.rawValue).\(send.id).\(send.attempts)@\(from.domain)>",
                                  text: letter.text, html: letter.html, extraHeaders: headers)
        message.inlineImages = letter.covers.map { MailMessage.InlineImage(contentID: $0.contentID, contentType: $0.contentType, bytes: $0.bytes) }
        return message
    }

    /// `owner`'s latest emails, for Settings.
    package func sends(of owner: ListOwner) async -> [DigestSend] {
        (try? await store.sends(of: owner, limit: 5)) ?? []
    }

    /// Wakes the job runner (an address confirmed: a digest may be owed).
    package func wake() { queued.signal() }
}

/// What `vinylogue digest send USER` came to.
public enum DigestSendReport: Sendable, Equatable {
    /// Why an email was not sent, for the command's exit code.
    public enum Reason: Sendable, Equatable {
        /// Nothing to send to: no address, or not confirmed.
        case noDigest
        /// This server's configuration is missing something.
        case configuration
        /// The mail server or the database did not take it.
        case upstream
    }

    /// The mail server took it.
    case sent(address: String, note: String?)
    /// Not sent: the sentence says why and what to do.
    case notSent(String, Reason)
}

extension WeeklyDigests {
    /// Sends `subscription`'s digest of this week now, as Settings' "Send
    /// me this week's digest now" does, through the same queue (a server
    /// running on the same database never sends it a second time), and
    /// says what came of it. It sends that email alone, claimed by its key
    /// from `jobs`: whatever else is due is the server's. The command
    /// line's `vinylogue digest send`, once it found whose digest it is.
    package func sendNow(_ subscription: DigestSubscription, of user: Username, jobs: any JobQueue) async -> DigestSendReport {
        let owner = subscription.owner
        guard subscription.isConfirmed else {
            return .notSent("\(user.value)'s address \(subscription.address) is not confirmed yet: open the link in the email Vinylogue sent "
                + "there, then run this again.", .noDigest)
        }
        // Its own key: a click on Settings in the same minute is another email.
        let key = "command line " + UUID().uuidString
        var claim: JobClaim?
        do {
            try await queueNow(of: subscription, key: key)
            if let queued = try await store.sends(of: owner, limit: 20).first(where: { $0.kind == .now && $0.key == key }) {
                claim = try await jobs.claim(.digest, key: String(queued.id), as: JobHolder.name(), at: clock.now,
                                            lease: Self.ownLease, takingOverFrom: JobHolder.isGone)
            }
        } catch {
            return .notSent("The digest could not be queued (\(error)). Check that the database is reachable, then run this again.", .upstream)
        }
        guard let claim, let id = Int64(claim.job.key) else {
            return .notSent("A running server took the digest to send it: its Settings say what came of it.", .upstream)
        }
        // As the runner would: an email that did not begin ends its job here.
        let ending = await JobRunner.renewing(claim, in: jobs, clock: clock, lease: Self.ownLease) { await run(claim) }
        _ = try? await jobs.end(claim, as: ending, at: clock.now)
        guard let done = await sends(of: owner).first(where: { $0.id == id }) else {
            return .notSent("The digest was sent or not, and the database could not say which: Settings shows it.", .upstream)
        }
        let reason = done.reason ?? "the mail server did not take it."
        switch done.state {
        case .sent: return .sent(address: done.address, note: done.reason)
        case .waiting: return .notSent("Not sent yet: \(reason) A running server tries again later.", .upstream)
        case .sending: return .notSent("Another instance is sending it now.", .upstream)
        case .skipped: return .notSent("Not sent: \(reason)", .noDigest)
        case .failed: return .notSent("Not sent: \(reason)", .upstream)
        }
    }
}

