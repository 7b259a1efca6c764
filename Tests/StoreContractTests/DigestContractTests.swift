import Foundation
import Stores
import Testing
import VinylogueCore

/// Digest subscriptions and their send queue, on both stores: an address
/// waits for its confirmation, a changed address takes a new token and
/// skips what was waiting for the old one, a week's digest is queued once
/// however often it is asked, each email is claimed by one sender at a
/// time and taken over when its sender died, and ends as its holder says.
@Suite struct DigestContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test(arguments: Backend.allCases)
    func anAddressIsConfirmedByItsTokenOnly(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests
            let vera = ListOwner.account(3)
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
            #expect(try await digests.nextDue() == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func eachEmailGoesThroughOneSenderOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests
            let noor = ListOwner.account(4), household = ListOwner.household
            let due = Self.now.addingTimeInterval(-10)
            // Two instances queue the same week: one row.
            #expect(try await digests.queue(noor, kind: .weekly, key: "2026-11-30", address: "noor@example.org", due: due, at: Self.now))
            #expect(try await digests.queue(noor, kind: .weekly, key: "2026-11-30", address: "noor@example.org", due: due, at: Self.now) == false)
            #expect(try await digests.queue(household, kind: .now, key: "1", address: "me@example.org", due: Self.now.addingTimeInterval(30),
                                            at: Self.now))
            #expect(try await digests.nextDue() == due)
            let first = try #require(try await digests.claim(as: "a/1/x", at: Self.now, lease: 60, takingOverFrom: { _ in false }))
            #expect(first.owner == noor && first.kind == .weekly && first.key == "2026-11-30" && first.attempts == 1 && first.state == .sending)
            // The other is not due yet; the claimed one is held.
            #expect(try await digests.claim(as: "b/1/y", at: Self.now, lease: 60, takingOverFrom: { _ in false }) == nil)
            // Its sender failed for now: back in line with the reason.
            #expect(try await digests.postpone(first.id, as: "a/1/x", until: Self.now.addingTimeInterval(120), reason: "451 Try again later",
                                               at: Self.now))
            #expect(try await digests.sends(of: noor, limit: 5).first?.reason == "451 Try again later")
            let second = try #require(try await digests.claim(as: "b/1/y", at: Self.now.addingTimeInterval(30), lease: 60,
                                                              takingOverFrom: { _ in false }))
            #expect(second.owner == household && second.kind == .now)
            // A sender killed mid-send: its lease runs out and another takes it, counting a second try.
            let again = try #require(try await digests.claim(as: "c/1/z", at: Self.now.addingTimeInterval(125), lease: 60,
                                                             takingOverFrom: { _ in false }))
            #expect(again.id == second.id && again.attempts == 2)
            let next = try #require(try await digests.claim(as: "d/1/w", at: Self.now.addingTimeInterval(126), lease: 60,
                                                            takingOverFrom: { _ in false }))
            #expect(next.id == first.id && next.attempts == 2)
            // A sender known to have stopped is taken over before its lease ends.
            let taken = try #require(try await digests.claim(as: "e/1/v", at: Self.now.addingTimeInterval(127), lease: 60,
                                                             takingOverFrom: { $0 == "d/1/w" }))
            #expect(taken.id == first.id && taken.attempts == 3)
            // Only the holder ends a claim.
            #expect(try await digests.finish(second.id, as: "b/1/y", state: .sent, reason: nil, at: Self.now.addingTimeInterval(127)) == false)
            #expect(try await digests.finish(second.id, as: "c/1/z", state: .sent, reason: nil, at: Self.now.addingTimeInterval(127)))
            #expect(try await digests.finish(first.id, as: "d/1/w", state: .sent, reason: nil, at: Self.now.addingTimeInterval(128)) == false)
            #expect(try await digests.finish(first.id, as: "e/1/v", state: .failed, reason: "550 No such user",
                                             at: Self.now.addingTimeInterval(128)))
            #expect(try await digests.claim(as: "f/1/u", at: Self.now.addingTimeInterval(1000), lease: 60, takingOverFrom: { _ in true }) == nil)
            let noorSends = try await digests.sends(of: noor, limit: 5)
            #expect(noorSends.map(\.state) == [.failed] && noorSends[0].reason == "550 No such user" && noorSends[0].sentAt == nil)
            #expect(noorSends[0].attempts == 3)
            let sent = try #require(try await digests.sends(of: household, limit: 5).first)
            #expect(sent.state == .sent && sent.sentAt == Self.now.addingTimeInterval(127))
            #expect(try await digests.nextDue() == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func oneEmailIsClaimedByItsIdAndOldOnesAreForgotten(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests
            try await digests.queue(.household, kind: .now, key: "early", address: "me@example.org", due: Self.now, at: Self.now)
            try await digests.queue(.household, kind: .now, key: "mine", address: "me@example.org", due: Self.now, at: Self.now)
            let mine = try #require(try await digests.sends(of: .household, limit: 5).first { $0.key == "mine" })
            // Not due yet; then claimed though an older one waits; then held.
            #expect(try await digests.claim(mine.id, as: "cli/1/a", at: Self.now.addingTimeInterval(-1), lease: 60,
                                            takingOverFrom: { _ in false }) == nil)
            let claimed = try #require(try await digests.claim(mine.id, as: "cli/1/a", at: Self.now, lease: 60, takingOverFrom: { _ in false }))
            #expect(claimed.key == "mine" && claimed.state == .sending && claimed.attempts == 1)
            #expect(try await digests.claim(mine.id, as: "srv/1/b", at: Self.now, lease: 60, takingOverFrom: { _ in false }) == nil)
            #expect(try await digests.claim(mine.id, as: "srv/1/b", at: Self.now, lease: 60, takingOverFrom: { $0 == "cli/1/a" })?.attempts == 2)
            #expect(try await digests.finish(mine.id, as: "srv/1/b", state: .sent, reason: nil, at: Self.now))
            #expect(try await digests.claim(mine.id, as: "cli/1/c", at: Self.now.addingTimeInterval(999), lease: 60,
                                            takingOverFrom: { _ in true }) == nil)
            // Ended emails queued before a date go; waiting ones stay.
            #expect(try await digests.forget(endedBefore: Self.now.addingTimeInterval(1)) == 1)
            #expect(try await digests.sends(of: .household, limit: 5).map(\.key) == ["early"])
        }
    }

    @Test(arguments: Backend.allCases)
    func racingSendersClaimEachEmailOnce(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let digests = stores.digests
            for n in 1...20 {
                try await digests.queue(.account(Int64(n)), kind: .weekly, key: "2026-11-30", address: "p\(n)@example.org",
                                        due: Self.now, at: Self.now)
            }
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for sender in 0..<4 {
                    group.addTask {
                        var mine: [Int64] = []
                        while let send = try await digests.claim(as: "s/\(sender)/x", at: Self.now, lease: 60, takingOverFrom: { _ in false }) {
                            mine.append(send.id)
                        }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == 20 && Set(claimed).count == 20)
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
