import Foundation
import Stores
import Testing
import VinylogueCore

/// Digest subscriptions and their send queue, on both stores: an address
/// waits for its confirmation, a changed address takes a new token and
/// skips what was waiting for the old one, a week's digest is queued once
/// however often it is asked with its job in the queue, each email is
/// claimed (its job) by one sender at a time and taken over when its
/// sender died, and ends as its holder says, its row with its job; an
/// email whose account was erased mid-send records nothing.
@Suite struct DigestContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test(arguments: Backend.allCases)
    func anAddressIsConfirmedByItsTokenOnly(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests
            let vera = try await stores.accounts.signedIn(try Username("Vera"), lastFMSessionKey: "sk", at: Self.now).0.owner
            #expect(try await digests.subscription(of: vera) == nil)
            let saved = try await digests.save(vera, address: "vera@example.org", weekday: 2, hour: 8, years: 3, newToken: "t-one", at: Self.now)
            #expect(saved.address == "vera@example.org" && saved.weekday == 2 && saved.hour == 8 && saved.years == 3)
            #expect(saved.token == "t-one" && !saved.isConfirmed)
            #expect(try await digests.confirmedSubscriptions().isEmpty)
            #expect(try await digests.confirm(token: "t-wrong", at: Self.now) == nil)
            let confirmed = try #require(try await digests.confirm(token: "t-one", at: Self.now.addingTimeInterval(60)))
            #expect(confirmed.confirmedAt == Self.now.addingTimeInterval(60))
            // A second click changes nothing.
            #expect(try await digests.confirm(token: "t-one", at: Self.now.addingTimeInterval(120))?.confirmedAt == Self.now.addingTimeInterval(60))
            #expect(try await digests.confirmedSubscriptions().map(\.owner) == [vera])
            // The same address in another case keeps its token and confirmation; the schedule changes.
            let moved = try await digests.save(vera, address: "Vera@Example.org", weekday: 6, hour: 20, years: 5, newToken: "t-two",
                                               at: Self.now.addingTimeInterval(180))
            #expect(moved.token == "t-one" && moved.isConfirmed && moved.weekday == 6 && moved.hour == 20 && moved.years == 5)
            #expect(moved.address == "Vera@Example.org")
            // Another address waits for its own confirmation; the old link no longer works.
            _ = try await digests.queue(vera, kind: .weekly, key: "2026-11-30", address: "Vera@Example.org", due: Self.now, at: Self.now)
            let other = try await digests.save(vera, address: "v@example.net", weekday: 6, hour: 20, years: 5, newToken: "t-three",
                                               at: Self.now.addingTimeInterval(240))
            #expect(other.token == "t-three" && !other.isConfirmed)
            #expect(try await digests.confirm(token: "t-one", at: Self.now.addingTimeInterval(300)) == nil)
            #expect(try await digests.subscription(token: "t-three")?.owner == vera)
            let skipped = try await digests.sends(of: vera, limit: 10)
            #expect(skipped.map(\.state) == [.skipped] && skipped[0].reason == "The address changed before it went out.")
            // Unsubscribing ends it, and its waiting emails with it.
            _ = try await digests.queue(vera, kind: .confirmation, key: "t-three", address: "v@example.net", due: Self.now, at: Self.now)
            #expect(try await digests.remove(vera, reason: "Unsubscribed.", at: Self.now.addingTimeInterval(360)))
            #expect(try await digests.remove(vera, reason: "Unsubscribed.", at: Self.now.addingTimeInterval(360)) == false)
            #expect(try await digests.subscription(of: vera) == nil)
            #expect(try await digests.subscription(token: "t-three") == nil)
            #expect(try await digests.sends(of: vera, limit: 10).map(\.state) == [.skipped, .skipped])
            // Their jobs went with them.
            #expect(try await stores.jobs.nextDue(of: [.digest], on: "m") == nil)
        }
    }

    /// Claims the next due email's job as `holder` at `now` (as the runner
    /// does) and begins it; nil when none is due.
    static func claim(_ stores: StoreContractTests.Stores, as holder: String, at now: Date,
                      takingOverFrom isGone: @escaping @Sendable (String) -> Bool = { _ in false }) async throws -> (JobClaim, DigestSend)? {
        guard let job = try await stores.jobs.claimNext(of: [.digest], on: "m", as: holder, at: now, lease: 60, takingOverFrom: isGone),
              let send = try await stores.digests.begin(job, at: now) else { return nil }
        return (job, send)
    }

    @Test(arguments: Backend.allCases)
    func eachEmailGoesThroughOneSenderOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests
            let noor = try await stores.accounts.signedIn(try Username("Noor"), lastFMSessionKey: "sk", at: Self.now).0.owner
            let household = ListOwner.household
            let due = Self.now.addingTimeInterval(-10)
            // Two instances queue the same week: one row, one job.
            #expect(try await digests.queue(noor, kind: .weekly, key: "2026-11-30", address: "noor@example.org", due: due, at: Self.now))
            #expect(try await digests.queue(noor, kind: .weekly, key: "2026-11-30", address: "noor@example.org", due: due, at: Self.now) == false)
            #expect(try await digests.queue(household, kind: .now, key: "1", address: "me@example.org", due: Self.now.addingTimeInterval(30),
                                            at: Self.now))
            #expect(try await stores.jobs.nextDue(of: [.digest], on: "m") == due)
            let (firstJob, first) = try #require(try await Self.claim(stores, as: "a/1/x", at: Self.now))
            #expect(first.owner == noor && first.kind == .weekly && first.key == "2026-11-30" && first.attempts == 1 && first.state == .sending)
            #expect(firstJob.job.key == String(first.id) && firstJob.job.person == "noor")
            // The other is not due yet; the claimed one is held.
            #expect(try await Self.claim(stores, as: "b/1/y", at: Self.now) == nil)
            // Its sender failed for now: back in line with the reason, row and job together.
            #expect(try await digests.end(firstJob, as: .retry(at: Self.now.addingTimeInterval(120), reason: "451 Try again later"), at: Self.now))
            let postponed = try #require(try await digests.sends(of: noor, limit: 5).first)
            #expect(postponed.reason == "451 Try again later" && postponed.state == .waiting && postponed.dueAt == Self.now.addingTimeInterval(120))
            let (secondJob, second) = try #require(try await Self.claim(stores, as: "b/1/y", at: Self.now.addingTimeInterval(30)))
            #expect(second.owner == household && second.kind == .now)
            // A sender killed mid-send: its lease runs out and another takes it, counting a second try.
            let (againJob, again) = try #require(try await Self.claim(stores, as: "c/1/z", at: Self.now.addingTimeInterval(125)))
            #expect(again.id == second.id && again.attempts == 2)
            let (nextJob, next) = try #require(try await Self.claim(stores, as: "d/1/w", at: Self.now.addingTimeInterval(126)))
            #expect(next.id == first.id && next.attempts == 2)
            // A sender known to have stopped is taken over before its lease ends.
            let (takenJob, taken) = try #require(try await Self.claim(stores, as: "e/1/v", at: Self.now.addingTimeInterval(127),
                                                                      takingOverFrom: { $0 == "d/1/w" }))
            #expect(taken.id == first.id && taken.attempts == 3)
            // Only the holder ends a claim.
            #expect(try await digests.end(secondJob, as: .sent(note: nil), at: Self.now.addingTimeInterval(127)) == false)
            #expect(try await digests.end(againJob, as: .sent(note: nil), at: Self.now.addingTimeInterval(127)))
            #expect(try await digests.end(nextJob, as: .sent(note: nil), at: Self.now.addingTimeInterval(128)) == false)
            #expect(try await digests.end(takenJob, as: .failed(reason: "550 No such user"), at: Self.now.addingTimeInterval(128)))
            #expect(try await Self.claim(stores, as: "f/1/u", at: Self.now.addingTimeInterval(1000), takingOverFrom: { _ in true }) == nil)
            let noorSends = try await digests.sends(of: noor, limit: 5)
            #expect(noorSends.map(\.state) == [.failed] && noorSends[0].reason == "550 No such user" && noorSends[0].sentAt == nil)
            #expect(noorSends[0].attempts == 3)
            let sent = try #require(try await digests.sends(of: household, limit: 5).first)
            #expect(sent.state == .sent && sent.sentAt == Self.now.addingTimeInterval(127) && sent.reason == nil)
            #expect(try await stores.jobs.nextDue(of: [.digest], on: "m") == nil)
            #expect(try await stores.jobs.counts(of: .digest) == [.done: 1, .failed: 1])
        }
    }

    @Test(arguments: Backend.allCases)
    func oneEmailIsClaimedByItsKeyAndOldOnesAreForgotten(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests, jobs = stores.jobs
            try await digests.queue(.household, kind: .now, key: "early", address: "me@example.org", due: Self.now, at: Self.now)
            try await digests.queue(.household, kind: .now, key: "mine", address: "me@example.org", due: Self.now, at: Self.now)
            let mine = try #require(try await digests.sends(of: .household, limit: 5).first { $0.key == "mine" })
            // Claimed by its key though an older one waits; then held.
            let cli = try #require(try await jobs.claim(.digest, key: String(mine.id), as: "cli/1/a", at: Self.now, lease: 60,
                                                        takingOverFrom: { _ in false }))
            let claimed = try #require(try await digests.begin(cli, at: Self.now))
            #expect(claimed.key == "mine" && claimed.state == .sending && claimed.attempts == 1)
            #expect(try await jobs.claim(.digest, key: String(mine.id), as: "srv/1/b", at: Self.now, lease: 60, takingOverFrom: { _ in false }) == nil)
            // The command line's process ended: a server takes it over.
            let server = try #require(try await jobs.claim(.digest, key: String(mine.id), as: "srv/1/b", at: Self.now, lease: 60,
                                                           takingOverFrom: { $0 == "cli/1/a" }))
            #expect(try await digests.begin(server, at: Self.now)?.attempts == 2)
            // A run stopped with its server hands the email back, its try not counted.
            #expect(try await digests.end(server, as: .stopped, at: Self.now))
            #expect(try await digests.sends(of: .household, limit: 5).first { $0.key == "mine" }.map { [$0.state.rawValue, String($0.attempts)] }
                == ["waiting", "1"])
            let last = try #require(try await jobs.claim(.digest, key: String(mine.id), as: "srv/1/c", at: Self.now, lease: 60,
                                                         takingOverFrom: { _ in false }))
            #expect(try await digests.begin(last, at: Self.now)?.attempts == 2)
            #expect(try await digests.end(last, as: .sent(note: nil), at: Self.now))
            #expect(try await jobs.claim(.digest, key: String(mine.id), as: "cli/1/c", at: Self.now.addingTimeInterval(999), lease: 60,
                                         takingOverFrom: { _ in true }) == nil)
            // Ended emails queued before a date go; waiting ones stay.
            #expect(try await digests.forget(endedBefore: Self.now.addingTimeInterval(1)) == 1)
            #expect(try await digests.sends(of: .household, limit: 5).map(\.key) == ["early"])
        }
    }

    @Test(arguments: Backend.allCases)
    func racingSendersClaimEachEmailOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            for n in 1...20 {
                let owner = try await stores.accounts.signedIn(try Username("p\(n)"), lastFMSessionKey: "sk\(n)", at: Self.now).0.owner
                try await stores.digests.queue(owner, kind: .weekly, key: "2026-11-30", address: "p\(n)@example.org",
                                               due: Self.now, at: Self.now)
            }
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for sender in 0..<4 {
                    group.addTask {
                        var mine: [Int64] = []
                        while let claimed = try await Self.claim(stores, as: "s/\(sender)/x", at: Self.now) { mine.append(claimed.1.id) }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == 20 && Set(claimed).count == 20)
        }
    }

    /// An email asked for an account erased meanwhile (its subscription
    /// read just before the erasure) is not queued: no row, no job. (It
    /// was, its job the household's.)
    @Test(arguments: Backend.allCases)
    func nothingIsQueuedForAnErasedAccount(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, _ in
            let (vera, _) = try await stores.accounts.signedIn(try Username("Vera"), lastFMSessionKey: "sk", at: Self.now)
            _ = try await eraser.erase(vera)
            #expect(try await stores.digests.queue(vera.owner, kind: .weekly, key: "2026-11-30", address: "vera@example.org",
                                                   due: Self.now, at: Self.now) == false)
            #expect(try await stores.digests.sends(of: vera.owner, limit: 5).isEmpty)
            #expect(try await stores.jobs.nextDue(of: [.digest], on: "m") == nil)
        }
    }

    /// An account erased while its email is being sent: the erasure deletes
    /// the email's job (the fence) and row, and the send's end, arriving
    /// after, writes nothing.
    @Test(arguments: Backend.allCases)
    func anEmailOfAnErasedAccountRecordsNothing(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, _ in
            let (vera, _) = try await stores.accounts.signedIn(try Username("Vera"), lastFMSessionKey: "sk", at: Self.now)
            let (ybsc, _) = try await stores.accounts.signedIn(try Username("ybsc"), lastFMSessionKey: "sk2", at: Self.now)
            try await stores.digests.queue(vera.owner, kind: .now, key: "1", address: "vera@example.org", due: Self.now, at: Self.now)
            try await stores.digests.queue(ybsc.owner, kind: .now, key: "1", address: "y@example.org", due: Self.now, at: Self.now)
            let (job, send) = try #require(try await Self.claim(stores, as: "s/1/x", at: Self.now))
            #expect(send.owner == vera.owner && job.job.person == "vera")
            _ = try await eraser.erase(vera)
            #expect(try await stores.digests.end(job, as: .sent(note: nil), at: Self.now) == false)
            #expect(try await stores.jobs.job(job.job.id) == nil)
            #expect(try await stores.digests.sends(of: vera.owner, limit: 5).isEmpty)
            // Another person's email is theirs still.
            let (other, otherSend) = try #require(try await Self.claim(stores, as: "s/1/x", at: Self.now))
            #expect(otherSend.owner == ybsc.owner && other.job.person == "ybsc")
            #expect(try await stores.digests.end(other, as: .sent(note: nil), at: Self.now))
        }
    }

    @Test func aWeeklySlotIsTheLatestDayAndHourInThePersonsZone() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        // Wednesday 2026-11-25 12:00 UTC = 13:00 in Berlin.
        let wednesday = Date(timeIntervalSince1970: 1_795_608_000)
        // Monday 08:00 Berlin = 07:00 UTC on 2026-11-23.
        let monday = DigestSchedule.latestSlot(weekday: 2, hour: 8, in: berlin, atOrBefore: wednesday)
        #expect(monday == Date(timeIntervalSince1970: 1_795_417_200))
        #expect(DigestSchedule.key(of: monday, in: berlin) == "2026-W48")
        // The week is the person's: Sunday 23:30 in Berlin is still week 48 there, Monday in UTC.
        let sundayNight = Date(timeIntervalSince1970: 1_795_991_400) // 2026-11-29 22:30 UTC
        #expect(DigestSchedule.key(of: sundayNight, in: berlin) == "2026-W48")
        #expect(DigestSchedule.key(of: sundayNight.addingTimeInterval(3600), in: berlin) == "2026-W49")
        // The same day, an hour that has passed and one that has not.
        #expect(DigestSchedule.latestSlot(weekday: 4, hour: 13, in: berlin, atOrBefore: wednesday) == wednesday)
        #expect(DigestSchedule.latestSlot(weekday: 4, hour: 14, in: berlin, atOrBefore: wednesday)
            == wednesday.addingTimeInterval(-7 * 86400 + 3600))
        #expect(DigestSchedule.nextSlot(weekday: 2, hour: 8, in: berlin, after: wednesday) == monday.addingTimeInterval(7 * 86400))
        #expect(DigestSchedule.nextSlot(weekday: 4, hour: 13, in: berlin, after: wednesday) == wednesday.addingTimeInterval(7 * 86400))
        // Sunday 2026-03-29 02:00 does not exist in Berlin: the slot is the first instant after (03:00 CEST = 01:00 UTC).
        let afterSpring = Date(timeIntervalSince1970: 1_774_760_400) // 2026-03-29 05:00 UTC
        #expect(DigestSchedule.latestSlot(weekday: 1, hour: 2, in: berlin, atOrBefore: afterSpring) == Date(timeIntervalSince1970: 1_774_746_000))
    }

    @Test func aDigestIsOwedOnlyAfterConfirmationAndWithinItsGrace() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let monday8 = Date(timeIntervalSince1970: 1_795_420_800) // 2026-11-23 08:00 UTC, a Monday
        var subscription = DigestSubscription(owner: .household, address: "me@example.org", weekday: 2, hour: 8, years: 3, token: "t",
                                              confirmedAt: nil, updatedAt: monday8)
        #expect(DigestSchedule.due(subscription, in: utc, at: monday8.addingTimeInterval(60)) == nil)
        subscription.confirmedAt = monday8.addingTimeInterval(-86400)
        let owed = try #require(DigestSchedule.due(subscription, in: utc, at: monday8.addingTimeInterval(60)))
        #expect(owed.slot == monday8 && owed.key == "2026-W48")
        // Down for two days: that week's is not sent late into the next.
        #expect(DigestSchedule.due(subscription, in: utc, at: monday8.addingTimeInterval(2 * 86400)) == nil)
        // Confirmed after this week's hour: the first one is next week's.
        subscription.confirmedAt = monday8.addingTimeInterval(30)
        #expect(DigestSchedule.due(subscription, in: utc, at: monday8.addingTimeInterval(60)) == nil)
    }
}
