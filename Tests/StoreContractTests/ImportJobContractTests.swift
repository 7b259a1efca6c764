import Foundation
import Stores
import Testing
import VinylogueCore

/// Uploaded exports as durable jobs, on both stores: claimed only on the
/// machine holding the file, by one worker at a time, taken over from a
/// worker that died, ended only by their holder, listed for their owner.
@Suite struct ImportJobContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rj = try! Username("RJ")

    @Test(arguments: Backend.allCases)
    func anUploadIsImportedOnceOnItsOwnMachine(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let jobs = stores.importJobs
            let owner = ListOwner.account(7)
            let first = try await jobs.queue(owner: owner, user: Self.rj, fileName: "scrobbles.csv", path: "/data/uploads/a.upload",
                                             bytes: 1_234, machine: "here", at: Self.now)
            #expect(first.state == .queued && first.fileName == "scrobbles.csv" && first.user == Self.rj)
            _ = try await jobs.queue(owner: owner, user: Self.rj, fileName: "listens.zip", path: "/data/uploads/b.upload", bytes: 9,
                                     machine: "there", at: Self.now.addingTimeInterval(1))
            // Another machine never takes this one's file.
            let there = try #require(try await jobs.claimNext(on: "there", as: "there/1/x", at: Self.now.addingTimeInterval(2), lease: 60,
                                                              takingOverFrom: { _ in false }))
            #expect(there.fileName == "listens.zip")
            let here = try #require(try await jobs.claimNext(on: "here", as: "here/1/a", at: Self.now.addingTimeInterval(2), lease: 60,
                                                             takingOverFrom: { _ in false }))
            #expect(here.id == first.id && here.state == .importing)
            #expect(try await jobs.claimNext(on: "here", as: "here/1/b", at: Self.now.addingTimeInterval(3), lease: 60,
                                             takingOverFrom: { _ in false }) == nil)
            // A worker that died is taken over; the old holder can no longer write.
            let taken = try #require(try await jobs.claimNext(on: "here", as: "here/2/c", at: Self.now.addingTimeInterval(4), lease: 60,
                                                              takingOverFrom: { $0 == "here/1/a" }))
            #expect(taken.id == first.id)
            #expect(try await jobs.renew(first.id, as: "here/1/a", at: Self.now.addingTimeInterval(5), lease: 60) == false)
            #expect(try await jobs.finish(first.id, as: "here/1/a", summary: "x", failure: nil, at: Self.now.addingTimeInterval(5)) == false)
            #expect(try await jobs.renew(first.id, as: "here/2/c", at: Self.now.addingTimeInterval(5), lease: 60))
            #expect(try await jobs.finish(first.id, as: "here/2/c", summary: "Imported 12 scrobbles.", failure: nil,
                                          at: Self.now.addingTimeInterval(6)))
            #expect(try await jobs.finish(there.id, as: "there/1/x", summary: nil, failure: "It is not an export Vinylogue reads.",
                                          at: Self.now.addingTimeInterval(7)))
            let listed = try await jobs.jobs(of: owner, limit: 10)
            #expect(listed.map(\.fileName) == ["listens.zip", "scrobbles.csv"])
            #expect(listed[0].state == .failed && listed[0].reason == "It is not an export Vinylogue reads.")
            #expect(listed[1].state == .done && listed[1].summary == "Imported 12 scrobbles.")
            #expect(try await jobs.jobs(of: .household, limit: 10).isEmpty)
            #expect(try await jobs.waiting(on: "here") == 0)
            // A lease that ran out frees the job for the next worker.
            let again = try await jobs.queue(owner: .household, user: Self.rj, fileName: "c.json", path: "/c", bytes: 1, machine: "here",
                                             at: Self.now.addingTimeInterval(8))
            _ = try #require(try await jobs.claimNext(on: "here", as: "here/3/d", at: Self.now.addingTimeInterval(9), lease: 60,
                                                      takingOverFrom: { _ in false }))
            let expired = try #require(try await jobs.claimNext(on: "here", as: "here/4/e", at: Self.now.addingTimeInterval(70), lease: 60,
                                                                takingOverFrom: { _ in false }))
            #expect(expired.id == again.id)
        }
    }
}
