import Foundation
import Stores
import Testing
import VinylogueCore

/// Uploaded exports, on both stores: each upload is queued with its job in
/// the one queue (for the machine holding the file), listed for its owner
/// with what came of it.
@Suite struct ImportJobContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let rj = try! Username("RJ")

    @Test(arguments: Backend.allCases)
    func anUploadIsQueuedWithItsJobAndListedWithWhatCameOfIt(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let uploads = stores.importJobs, jobs = stores.jobs
            let owner = ListOwner.account(7)
            let first = try await uploads.queue(owner: owner, user: Self.rj, fileName: "scrobbles.csv", path: "/data/uploads/a.upload",
                                                bytes: 1_234, machine: "here", at: Self.now)
            #expect(first.state == .queued && first.fileName == "scrobbles.csv" && first.user == Self.rj)
            let second = try await uploads.queue(owner: owner, user: Self.rj, fileName: "listens.zip", path: "/data/uploads/b.upload", bytes: 9,
                                                 machine: "there", at: Self.now.addingTimeInterval(1))
            #expect(try await uploads.waiting(on: "here") == 1)
            // Each upload's job is for its own machine only.
            let queued = try #require(try await jobs.jobs(of: .upload, key: String(first.id)).first)
            #expect(queued.machine == "here" && queued.person == "rj" && queued.state == .queued)
            let there = try #require(try await jobs.claimNext(of: [.upload], on: "there", as: "there/1/x", at: Self.now.addingTimeInterval(2),
                                                              lease: 60, takingOverFrom: { _ in false }))
            #expect(there.job.key == String(second.id))
            #expect(try await jobs.claimNext(of: [.upload], on: "there", as: "there/1/y", at: Self.now.addingTimeInterval(2), lease: 60,
                                             takingOverFrom: { _ in false }) == nil)
            try await uploads.begin(first.id, at: Self.now.addingTimeInterval(3))
            #expect(try await uploads.upload(first.id)?.state == .importing)
            try await uploads.finish(first.id, summary: "Imported 12 scrobbles.", failure: nil, at: Self.now.addingTimeInterval(6))
            try await uploads.finish(second.id, summary: nil, failure: "It is not an export Vinylogue reads.", at: Self.now.addingTimeInterval(7))
            // An ended upload stays as it ended.
            try await uploads.begin(first.id, at: Self.now.addingTimeInterval(8))
            let listed = try await uploads.jobs(of: owner, limit: 10)
            #expect(listed.map(\.fileName) == ["listens.zip", "scrobbles.csv"])
            #expect(listed[0].state == .failed && listed[0].reason == "It is not an export Vinylogue reads.")
            #expect(listed[1].state == .done && listed[1].summary == "Imported 12 scrobbles.")
            #expect(try await uploads.jobs(of: .household, limit: 10).isEmpty)
            #expect(try await uploads.waiting(on: "here") == 0)
            #expect(try await uploads.upload(999) == nil)
        }
    }
}
