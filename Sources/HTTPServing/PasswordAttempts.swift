import Foundation
import Synchronization
import VinylogueCore

/// Wrong site passwords, counted per client address in memory, so that
/// guessing is slowed without locking the household out.
///
/// The first `freeFailures` mistakes of an address cost nothing (a typo, a
/// stale password in a browser); each one after begins a delay, a second
/// doubling to `longestDelay`, during which the address is answered 429
/// whatever it sends: no password is checked then, and no thread waits.
/// The right password forgets the address's mistakes, and so does
/// `forgetAfter` without one. Other addresses are never slowed. At most
/// `capacity` addresses are remembered (a flood of addresses must not grow
/// memory): past it, those whose mistakes were forgotten go first, then
/// those not in a delay, then the oldest.
package final class PasswordAttempts: Sendable {
    private struct Record {
        package var failures: Int
        package var lastFailure: Date
        /// When its delay ends; nil while its mistakes are free.
        package var delayedUntil: Date?
    }

    package static let freeFailures = 5
    package static let firstDelay: TimeInterval = 1
    package static let longestDelay: TimeInterval = 30
    package static let forgetAfter: TimeInterval = 10 * 60

    package let capacity: Int
    private let clock: WallClock
    private let records = Mutex<[String: Record]>([:])

    package init(clock: WallClock, capacity: Int = 10_000) {
        self.clock = clock
        self.capacity = capacity
    }

    /// How long `address` must still wait before a password from it is
    /// checked; nil when it need not.
    package func delay(for address: String) -> TimeInterval? {
        let now = clock.now
        return records.withLock { records in
            guard let until = records[address]?.delayedUntil, until > now else { return nil }
            return until.timeIntervalSince(now)
        }
    }

    /// Counts a wrong password from `address`: how many in a row it has
    /// sent, and the delay this one begins (nil while mistakes are free).
    package func failed(_ address: String) -> (failures: Int, delay: TimeInterval?) {
        let now = clock.now
        return records.withLock { records in
            var record = records[address] ?? Record(failures: 0, lastFailure: now, delayedUntil: nil)
            if now.timeIntervalSince(record.lastFailure) >= Self.forgetAfter { record = Record(failures: 0, lastFailure: now, delayedUntil: nil) }
            record.failures += 1
            record.lastFailure = now
            var delay: TimeInterval?
            if record.failures > Self.freeFailures {
                let doublings = Double(min(record.failures - Self.freeFailures - 1, 16))
                delay = min(Self.longestDelay, Self.firstDelay * pow(2, doublings))
                record.delayedUntil = now.addingTimeInterval(delay ?? 0)
            }
            if records[address] == nil, records.count >= capacity { Self.makeRoom(in: &records, capacity: capacity, now: now) }
            records[address] = record
            return (record.failures, delay)
        }
    }

    /// The right password from `address`: its mistakes are forgotten.
    package func succeeded(_ address: String) {
        records.withLock { _ = $0.removeValue(forKey: address) }
    }

    /// How many addresses are remembered.
    package var tracked: Int { records.withLock { $0.count } }

    private static func makeRoom(in records: inout [String: Record], capacity: Int, now: Date) {
        records = records.filter { now.timeIntervalSince($0.value.lastFailure) < forgetAfter }
        if records.count >= capacity { records = records.filter { ($0.value.delayedUntil ?? .distantPast) > now } }
        if records.count >= capacity {
            let kept = records.sorted { $0.value.lastFailure > $1.value.lastFailure }.prefix(capacity / 2)
            records = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
    }
}
