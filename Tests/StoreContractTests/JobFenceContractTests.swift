import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
import VinylogueCore
@testable import Imports
@testable import Stores
@testable import Sync
@testable import Workers

/// Deleting wins every race with a running job (`JobFence`), on both
/// stores: a history copy whose person deletes what was copied, or their
/// whole account, while a page is on its way, and an uploaded import whose
/// person deletes their account between two batches, store nothing more,
/// leave no resume point, and a new copy or sign-in copies everything.
@Suite struct JobFenceContractTests {
    typealias Backend = StoreContractTests.Backend
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    /// Five pages of ten scrobbles, an hour apart, newest first.
    static let pages = 5, perPage = 10

    static func history() -> [Scrobble] {
        (0..<(pages * perPage)).map { n in
            Scrobble(instant: 1_600_000_000 + Int64(n) * 3600, artist: "Low", album: "Double Negative", track: "Track \(n)")
        }
    }

    /// Last.fm's pages of `history()`; asking for page `heldPage` waits at
    /// `gate` (once) before it answers.
    static func upstream(heldPage: Int, gate: Gate) -> RecentTracksGateway {
        let newestFirst = Array(history().reversed())
        return RecentTracksGateway { _, _, _, page, _ throws(SourceError) in
            if page == heldPage { await gate.pass() }
            let slice = Array(newestFirst[(page - 1) * perPage..<page * perPage])
            return ScrobblePage(scrobbles: slice, page: page, totalPages: pages, total: pages * perPage)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func deletingWhatWasCopiedWhileAPageIsOnItsWayLeavesNothingAndTheNextCopyCopiesAll(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let rj = try Username("RJ"), archive = stores.scrobbles, copies = stores.historyCopies
            let clock = WallClock.fixed(Self.now), gate = Gate()
            // Pages are walked from the last (oldest) to the first: page 3
            // is the third asked (after page 1, asked to open the walk, and page 5).
            let sync = ScrobbleSync(store: archive, gateway: Self.upstream(heldPage: 3, gate: gate), clock: clock, pageSize: Self.perPage)
            let worker = HistoryCopyWorker(copies: copies, syncs: { _ in sync }, clock: clock, queued: Wakeup())
            let copying = ClaimedCopy(copies: copies, clock: clock)
            let claim = try #require(try await copying.claim(rj))
            let run = Task { () async throws(SourceError) -> SyncSummary in try await copying.run(claim, sync) }
            await gate.arrival()
            #expect(try await archive.scrobbleCount(of: rj) == 20, "pages 5 and 4 stored before the deletion")

            #expect(try await worker.forget(rj, from: archive) == 20)
            gate.open()
            let outcome = await run.result
            #expect(throws: SourceError.self) { try outcome.get() }
            #expect(try await archive.scrobbleCount(of: rj) == 0, "the page on its way landed after the deletion")
            #expect(try await archive.syncStart(of: rj).pending == nil, "the resume point outlived the deletion")
            #expect(try await copies.copy(of: rj)?.state == .stopped)

            // "Copy again" copies everything.
            let again = ScrobbleSync(store: archive, gateway: Self.upstream(heldPage: 0, gate: gate), clock: clock, pageSize: Self.perPage)
            _ = try await copies.queue(rj, at: Self.now, evenIfStopped: true)
            let next = try #require(try await copying.claim(rj))
            let summary = try await copying.run(next, again)
            #expect(summary.imported == Self.pages * Self.perPage)
            #expect(try await archive.scrobbles(of: rj, from: 0, to: .max) == Self.history())
            #expect(try await copies.copy(of: rj)?.state == .done)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func deletingTheAccountWhileAPageIsOnItsWayLeavesNothingAndSigningInAgainCopiesAll(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles, copies = stores.historyCopies
            let clock = WallClock.fixed(Self.now), gate = Gate()
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: Self.now)
            let sync = ScrobbleSync(store: archive, gateway: Self.upstream(heldPage: 3, gate: gate), clock: clock, pageSize: Self.perPage)
            let copying = ClaimedCopy(copies: copies, clock: clock)
            let claim = try #require(try await copying.claim(zeb))
            let run = Task { () async throws(SourceError) -> SyncSummary in try await copying.run(claim, sync) }
            await gate.arrival()
            #expect(try await archive.scrobbleCount(of: zeb) == 20)

            _ = try await eraser.erase(account)
            gate.open()
            let outcome = await run.result
            #expect(throws: SourceError.cancelled(job: "The copy of Zebulon42's history")) { try outcome.get() }
            let left = try await dump().filter { $0.value.lowercased() == "zebulon42" || ($0.table == "scrobble" && $0.column == "track") }
            #expect(left.isEmpty, "left after the erasure: \(left)")
            #expect(try await archive.syncStart(of: zeb).pending == nil)

            // Signing in again starts a new account whose copy copies everything.
            _ = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb-2", at: Self.now)
            let again = ScrobbleSync(store: archive, gateway: Self.upstream(heldPage: 0, gate: gate), clock: clock, pageSize: Self.perPage)
            let next = try #require(try await copying.claim(zeb))
            let summary = try await copying.run(next, again)
            #expect(summary.imported == Self.pages * Self.perPage)
            #expect(try await archive.scrobbles(of: zeb, from: 0, to: .max) == Self.history())
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func deletingTheAccountWhileAnUploadIsImportingStopsItAndKeepsNothing(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles
            let dir = try TemporaryDirectory()
            let file = try Self.csv(in: dir)
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: Self.now)
            let upload = try await stores.importJobs.queue(owner: account.owner, user: zeb, fileName: "zeb.csv", path: file.path, bytes: 1,
                                                           machine: "m", at: Self.now)
            let claim = try #require(try await stores.jobs.claimNext(of: [.upload], on: "m", as: "importer", at: Self.now, lease: 600,
                                                                     takingOverFrom: { _ in false }))
            #expect(claim.job.key == String(upload.id) && claim.job.person == "zebulon42")
            var importer = ScrobbleImporter(store: archive, clock: .fixed(Self.now), batchSize: 100)
            importer.fence = JobFence(.upload(job: claim.job.id, upload: upload.id), holder: "importer")
            // The import's thread waits after its first batch until the
            // account is erased.
            let erased = DispatchSemaphore(value: 0), firstBatch = Gate()
            let batches = Mutex(0)
            let run = Self.importing(importer, file, zeb) {
                if batches.withLock({ $0 += 1; return $0 }) == 1 {
                    firstBatch.arrive()
                    erased.wait()
                }
            }
            await firstBatch.arrival()
            _ = try await eraser.erase(account)
            erased.signal()
            let outcome = await run.value
            #expect(throws: SourceError.cancelled(job: "The import of the uploaded export")) { try outcome.get() }
            #expect(try await archive.scrobbleCount(of: zeb) == 0)
            let left = try await dump().filter { $0.value.lowercased() == "zebulon42" || ($0.table == "scrobble" && $0.column == "track") }
            #expect(left.isEmpty, "left after the erasure: \(left)")
            #expect(try await stores.jobs.job(claim.job.id) == nil)
        }
    }

    /// The account deleted after an upload's listens were in and before
    /// the album choices its export carried were made again: the choices
    /// are refused by the upload's fence and nothing of them is kept.
    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func deletingTheAccountBeforeAnUploadsAlbumChoicesKeepsNoneOfThem(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles
            let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-zeb", at: Self.now)
            let upload = try await stores.importJobs.queue(owner: account.owner, user: zeb, fileName: "zeb.zip", path: "/nowhere", bytes: 1,
                                                           machine: "m", at: Self.now)
            let claim = try #require(try await stores.jobs.claimNext(of: [.upload], on: "m", as: "importer", at: Self.now, lease: 600,
                                                                     takingOverFrom: { _ in false }))
            let fence = JobFence(.upload(job: claim.job.id, upload: upload.id), holder: "importer")
            _ = try await archive.store([(Scrobble(instant: 1_700_000_000, artist: "Vetiver", album: "Tidewater (Deluxe Edition)", track: "Fog Lights"),
                                          .lastFMExport)], of: zeb, fence: fence)
            var summary = ImportSummary()
            summary.albumFolding = .asSpelled
            summary.albumChoices = [.keepApart(artist: "Vetiver", album: "Tidewater (Deluxe Edition)")]
            _ = try await eraser.erase(account)
            await #expect(throws: SourceError.self) {
                _ = try await UploadedImports.bringBack(summary, of: zeb, into: archive, at: Self.now, fence: fence)
            }
            #expect(try await archive.albumChoices(of: zeb).isEmpty)
            #expect(try await archive.albumFolding(of: zeb) == .editions)
            let left = try await dump().filter { $0.value.lowercased().contains("zebulon42") || $0.value.contains("Tidewater") }
            #expect(left.isEmpty, "left after the erasure: \(left)")
        }
    }

    /// An upload's import taken over midway (its worker stalled or killed)
    /// skips what the first run stored and counts it as its own: the
    /// summary says every line was imported, none a duplicate.
    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func anImportTakenOverCountsWhatItsFirstRunStoredAsItsOwn(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles, jobs = stores.importJobs
            let dir = try TemporaryDirectory()
            let file = try Self.csv(in: dir)
            let upload = try await jobs.queue(owner: .household, user: zeb, fileName: "zeb.csv", path: file.path, bytes: 1, machine: "m",
                                              at: Self.now)
            let first = try #require(try await stores.jobs.claimNext(of: [.upload], on: "m", as: "first", at: Self.now, lease: 600,
                                                                     takingOverFrom: { _ in false }))
            var importer = ScrobbleImporter(store: archive, clock: .fixed(Self.now), batchSize: 100)
            importer.fence = JobFence(.upload(job: first.job.id, upload: upload.id), holder: "first")
            // After its third batch, the first run's worker is taken for
            // dead and another takes the job over.
            let takenOver = DispatchSemaphore(value: 0), third = Gate(), batches = Mutex(0)
            let firstRun = Self.importing(importer, file, zeb) {
                if batches.withLock({ $0 += 1; return $0 }) == 3 {
                    third.arrive()
                    takenOver.wait()
                }
            }
            await third.arrival()
            // A batch being written holds the job's row; PostgreSQL's claim
            // skips a locked row (`SKIP LOCKED`), as a worker would until
            // its next look, so this claims again until the write is in.
            var claimed: JobClaim?
            let patience = ContinuousClock.now + .seconds(10)
            while claimed == nil, ContinuousClock.now < patience {
                claimed = try await stores.jobs.claimNext(of: [.upload], on: "m", as: "second", at: Self.now, lease: 600,
                                                          takingOverFrom: { $0 == "first" })
                if claimed == nil { try await Task.sleep(for: .milliseconds(5)) }
            }
            takenOver.signal()
            let second = try #require(claimed)
            let firstOutcome = await firstRun.value
            #expect(throws: SourceError.cancelled(job: "The import of the uploaded export")) { try firstOutcome.get() }
            let stored = try #require(try await jobs.upload(upload.id)).stored
            let earlier = stored.batches.count
            #expect(earlier >= 1 && earlier < 10, "\(earlier) batches stored before the take-over")
            #expect(try await archive.scrobbleCount(of: zeb) == earlier * 100)

            importer.fence = JobFence(.upload(job: second.job.id, upload: upload.id), holder: "second")
            importer.earlier = stored
            let summary = try await Self.importing(importer, file, zeb) {}.value.get()
            #expect(summary.imported == 1000 && summary.duplicates == 0, "\(summary.imported) imported, \(summary.duplicates) duplicates")
            #expect(try await archive.scrobbleCount(of: zeb) == 1000)
            #expect(try await stores.jobs.end(second, as: .done, at: Self.now))
            #expect(try await stores.jobs.end(first, as: .done, at: Self.now) == false)
        }
    }

    /// A Last.fm export CSV (artist, album, track, date) of 1,000 plays ten minutes apart.
    static func csv(in dir: borrowing TemporaryDirectory) throws -> URL {
        let file = dir.url.appendingPathComponent("zeb.csv")
        let lines = (0..<1000).map { n in "\"Low\",\"Double Negative\",\"Track \(n)\",\"\(Self.csvDate(1_600_000_000 + Int64(n) * 600))\"" }
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        return file
    }

    /// Runs `importer` on a thread of its own (it blocks), calling `batch`
    /// on that thread after each batch is handed to the writer.
    static func importing(_ importer: ScrobbleImporter, _ file: URL, _ user: Username,
                          batch: @escaping @Sendable () -> Void) -> Task<Result<ImportSummary, SourceError>, Never> {
        Task.detached {
            await withCheckedContinuation { (done: CheckedContinuation<Result<ImportSummary, SourceError>, Never>) in
                Thread {
                    done.resume(returning: Result { () throws(SourceError) -> ImportSummary in
                        try importer.importFile(at: file.path, for: user) { _ in batch() }
                    })
                }.start()
            }
        }
    }

    /// A job whose claim another worker took over stores nothing more.
    @Test(arguments: Backend.allCases)
    func aFenceHoldsOnlyForTheRunningHolder(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let rj = try Username("RJ"), archive = stores.scrobbles, copies = stores.historyCopies
            let page = Array(Self.history().prefix(3))
            let first = try #require(try await copies.claim(rj, as: "first", at: Self.now, lease: 60, takingOverFrom: { _ in false }))
            #expect(try await archive.storeSyncPage(page, of: rj, next: nil, fence: JobFence(first)).inserted == 3)
            let later = Self.now.addingTimeInterval(120)
            let second = try #require(try await copies.claim(rj, as: "second", at: later, lease: 60, takingOverFrom: { _ in false }))
            let more = Array(Self.history().dropFirst(3).prefix(3))
            await #expect(throws: SourceError.cancelled(job: "The copy of RJ's history")) {
                try await archive.storeSyncPage(more, of: rj, next: nil, fence: JobFence(first))
            }
            await #expect(throws: SourceError.cancelled(job: "The copy of RJ's history")) {
                try await archive.store(more.map { ($0, .sync(of: rj)) }, of: rj, fence: JobFence(first))
            }
            #expect(try await archive.scrobbleCount(of: rj) == 3)
            #expect(try await archive.storeSyncPage(more, of: rj, next: nil, fence: JobFence(second)).inserted == 3)
            // An upload's fence is its own job's row.
            await #expect(throws: SourceError.cancelled(job: "The import of the uploaded export")) {
                try await archive.store(more.map { ($0, .lastFMExport) }, of: rj, fence: JobFence(.upload(job: 42, upload: 42), holder: "second"))
            }
        }
    }

    /// Races a copy's page writes against the erasure of its person, many
    /// times: whichever commits first, nothing of the person is left.
    @Test(.timeLimit(.minutes(1)), arguments: Backend.allCases)
    func noWriteLandsAfterAnErasureWhateverTheInterleaving(_ backend: Backend) async throws {
        try await AccountErasureContractTests.withStores(backend) { stores, eraser, _, dump in
            let zeb = try Username("Zebulon42"), archive = stores.scrobbles
            for round in 0..<20 {
                let (account, _) = try await stores.accounts.signedIn(zeb, lastFMSessionKey: "sk-\(round)", at: Self.now)
                let claim = try #require(try await stores.historyCopies.claim(zeb, as: "r\(round)", at: Self.now, lease: 600,
                                                                               takingOverFrom: { _ in false }))
                let writer = Task {
                    for (n, page) in Self.history().chunked(into: 5).enumerated() {
                        do {
                            _ = try await archive.storeSyncPage(page, of: zeb, next: SyncState(fromInstant: 0, toInstant: 1, nextPage: n + 1,
                                                                                                 totalPages: 99, pageSize: 5), fence: JobFence(claim))
                        } catch {
                            return
                        }
                    }
                }
                if round % 2 == 0 { await Task.yield() }
                _ = try await eraser.erase(account)
                await writer.value
                #expect(try await archive.scrobbleCount(of: zeb) == 0, "round \(round) left listens")
                #expect(try await archive.syncStart(of: zeb).pending == nil, "round \(round) left a resume point")
            }
            let left = try await dump().filter { $0.value.lowercased() == "zebulon42" || ($0.table == "scrobble" && $0.column == "track") }
            #expect(left.isEmpty, "left: \(left)")
        }
    }

    static func csvDate(_ instant: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "dd MMM yyyy HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(instant)))
    }
}

/// One point a job stops at until the test opens it: `pass()` (the job)
/// tells `arrival()` (the test) it is there and waits for `open()`.
final class Gate: Sendable {
    private let arrived = AsyncStream<Void>.makeStream()
    private let opened = AsyncStream<Void>.makeStream()
    private let passed = Mutex(false)

    /// The job: waits here once, until the test opens the gate.
    func pass() async {
        let first = passed.withLock { passed in
            defer { passed = true }
            return !passed
        }
        guard first else { return }
        arrive()
        for await _ in opened.stream { return }
    }

    /// The job says it got here, without waiting.
    func arrive() { arrived.continuation.yield() }

    /// The test: returns once the job has arrived.
    func arrival() async {
        for await _ in arrived.stream { return }
    }

    func open() { opened.continuation.finish() }
}

extension Array {
    func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
