import Foundation
import Testing
import VinylogueCore
@testable import Stores

/// "Delete what was copied" (`SyncLog.forgetCopy(of:)`), the same
/// on both stores: a copy's listens go, a player's listen that had been set
/// aside as the same play counts again, everything else stays, and the
/// kept charts follow.
@Suite struct ForgetCopyContractTests {
    typealias Backend = StoreContractTests.Backend

    @Test(arguments: Backend.allCases)
    func whatACopyStoredGoesAndWhatItHidCountsAgain(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let rj = try Username("RJ"), archive = stores.scrobbles
            let copied = [
                Scrobble(instant: 1_699_990_000, artist: "Low", album: "HEY WHAT", track: "White Horses"),
                Scrobble(instant: 1_699_990_300, artist: "Low", album: "HEY WHAT", track: "I Can Wait"),
            ]
            _ = try await archive.store(copied, of: rj, origin: .sync(of: rj))
            try await archive.beginSync(SyncState(fromInstant: 0, toInstant: 1_700_000_000, nextPage: 2, totalPages: 3, pageSize: 200), of: rj)
            // The player's report of the first play, 20 s later: set aside.
            let played = Scrobble(instant: 1_699_990_020, artist: "Low", album: "HEY WHAT", track: "White Horses")
            let other = Scrobble(instant: 1_699_991_000, artist: "Low", album: "HEY WHAT", track: "Disappearing")
            #expect(try await archive.store([played, other], of: rj, origin: .received) == InsertCounts(inserted: 1, duplicates: 1))
            let week = LastFMWeekCalendar.week(containing: 1_699_990_000)
            #expect(try await archive.charts(.album, of: rj, weeks: [week])?.first?.entries.first?.plays == 3)

            #expect(try await archive.forgetCopy(of: rj) == 2)
            #expect(try await archive.scrobbles(of: rj, from: 0, to: .max) == [played, other])
            #expect(try await archive.charts(.album, of: rj, weeks: [week])?.first?.entries.first?.plays == 2)
            #expect(try await archive.charts(.track, of: rj, weeks: [week])?.first?.entries.map(\.name).sorted() == ["Disappearing", "White Horses"])
            #expect(try await archive.syncStart(of: rj).pending == nil)
            // Nothing more to forget; a person with no archive has none.
            #expect(try await archive.forgetCopy(of: rj) == 0)
            #expect(try await archive.forgetCopy(of: try Username("nobody")) == 0)

            // The copy is left stopped with nothing copied.
            _ = try await stores.historyCopies.queue(rj, at: .now)
            try await stores.historyCopies.clear(rj, at: .now)
            let copy = try await stores.historyCopies.copy(of: rj)
            #expect(copy?.state == .stopped && copy?.scrobbles == 0 && copy?.doneAt == nil)
        }
    }
}
