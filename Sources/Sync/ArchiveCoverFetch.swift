import Artwork
import Foundation
import Stores
import VinylogueCore

/// Resolves the cover of every album in one person's archive and keeps
/// each image on disk, so their pages show covers with no network
/// (`vinylogue art fetch`).
///
/// Albums go most played first. An album whose answer is remembered is not
/// asked about again, and a kept image is not fetched again, so a second
/// run asks nothing and an interrupted run resumes where it stopped (every
/// answer is stored as soon as it arrives). Last.fm is asked through the
/// given `AlbumCovers`, whose source carries the client's rate limit; up to
/// `concurrency` albums are worked on at once so that the limit, not the
/// round trip, sets the pace.
public struct ArchiveCoverFetch: Sendable {
    /// How far a run has come.
    public struct Progress: Sendable {
        public let done: Int
        public let total: Int
        public let found: Int
        public let noCover: Int
        public let failed: Int
    }

    /// An album that could not be resolved or kept, and why.
    public struct Failure: Sendable, Hashable {
        public let artist: String
        public let name: String
        public let reason: String
    }

    /// What a run did.
    public struct Summary: Sendable {
        /// Albums in the archive.
        public var albums = 0
        /// Albums whose answer was remembered (and image kept) before this run.
        public var alreadyDone = 0
        /// Albums Last.fm named a cover for in this run.
        public var found = 0
        /// Albums Last.fm has no cover for (learned in this run).
        public var noCover = 0
        /// Images downloaded and kept in this run.
        public var keptImages = 0
        public var failures: [Failure] = []
        /// Stopped by cancellation (Ctrl-C) before every album was done.
        public var interrupted = false
        /// Stopped because Last.fm kept failing: the last failure.
        public var gaveUp: SourceError?
        /// Albums not attempted (interrupted or given up).
        public var notAttempted = 0
    }

    public let covers: AlbumCovers
    public let artwork: ArtworkStore
    let concurrency: Int
    /// Consecutive failures of the moment (network, rate limiting, 5xx)
    /// after which the run stops instead of walking the rest of the archive.
    let patience: Int

    public init(covers: AlbumCovers, artwork: ArtworkStore, concurrency: Int, patience: Int = 5) {
        self.covers = covers
        self.artwork = artwork
        self.concurrency = max(1, concurrency)
        self.patience = max(1, patience)
    }

    /// What happened to one album.
    private enum Outcome: Sendable {
        /// `answer` is nil when it was remembered before this run.
        case done(answer: CoverAnswer?, keptImage: Bool)
        case failed(Failure, upstream: SourceError?)
        case notAttempted
    }

    /// Works through `user`'s albums. Throws only for what no album can get
    /// past (no API key, a rejected key, an unreadable database); anything
    /// else is in the summary. Cancelling the task stops the run early with
    /// `interrupted` set; what was done is kept. With `askAgainWithoutCover`,
    /// albums remembered as having no cover are asked about again (art is
    /// added to Last.fm over time).
    public func run(for user: Username, askAgainWithoutCover: Bool = false,
                    progress: @escaping @Sendable (Progress) async -> Void = { _ in }) async throws(SourceError) -> Summary {
        let albums = try await covers.store.archivedAlbums(of: user)
        guard !albums.isEmpty else { throw .notArchived(user: user.value) }
        var known = try await covers.store.answers(for: albums.map(\.key))
        if askAgainWithoutCover { known = known.filter { $0.value != .noCover } }
        var summary = Summary()
        summary.albums = albums.count
        var consecutiveUpstreamFailures = 0
        var fatal: SourceError?

        let work = self
        await withTaskGroup(of: Outcome.self) { group in
            var next = 0
            func startNext() {
                let album = albums[next]
                let remembered = known[album.key]
                next += 1
                group.addTask {
                    if Task.isCancelled { return .notAttempted }
                    return await work.handle(album, remembered: remembered)
                }
            }
            while next < albums.count && next < concurrency { startNext() }
            var done = 0
            while let outcome = await group.next() {
                done += 1
                switch outcome {
                case .done(let answer, let kept):
                    switch answer {
                    case .cover?: summary.found += 1
                    case .noCover?: summary.noCover += 1
                    case nil: if !kept { summary.alreadyDone += 1 }
                    }
                    if kept { summary.keptImages += 1 }
                    consecutiveUpstreamFailures = 0
                case .failed(let failure, let upstream):
                    summary.failures.append(failure)
                    switch upstream {
                    case .missingAPIKey?, .invalidAPIKey?:
                        // Fails every album alike: no point going on.
                        fatal = upstream
                    case let error? where error.isTemporary:
                        consecutiveUpstreamFailures += 1
                        if consecutiveUpstreamFailures >= patience { summary.gaveUp = error }
                    default:
                        // This album only (an odd answer about it, a disk write).
                        consecutiveUpstreamFailures = 0
                    }
                case .notAttempted:
                    summary.notAttempted += 1
                }
                await progress(Progress(done: done, total: albums.count, found: summary.found, noCover: summary.noCover,
                                        failed: summary.failures.count))
                let stopping = Task.isCancelled || fatal != nil || summary.gaveUp != nil
                if next < albums.count {
                    if stopping {
                        summary.notAttempted += albums.count - next
                        next = albums.count
                    } else {
                        startNext()
                    }
                }
            }
        }
        if let fatal { throw fatal }
        summary.interrupted = Task.isCancelled && summary.gaveUp == nil
        return summary
    }

    /// Keeps the image, trying once more after a failure of the network
    /// or a 5xx (a kept-alive connection reset as it was reused fails a
    /// request that a second attempt gets through).
    private func keep(_ address: ArtworkAddress) async throws(ArtworkError) -> Bool {
        do {
            return try await artwork.keep(address)
        } catch {
            switch error {
            case .unreachable, .upstreamStatus(500...599):
                guard !Task.isCancelled else { throw error }
                try? await Task.sleep(for: .milliseconds(250))
                return try await artwork.keep(address)
            default:
                throw error
            }
        }
    }

    /// Resolves one album (unless remembered) and keeps its image (unless kept).
    private func handle(_ album: ArchivedAlbum, remembered: CoverAnswer?) async -> Outcome {
        let answer: CoverAnswer
        if let remembered {
            answer = remembered
        } else {
            do {
                answer = try await covers.resolve(artist: album.artist, name: album.name, mbid: album.mbid)
            } catch {
                if Task.isCancelled { return .notAttempted }
                let failure = Failure(artist: album.artist, name: album.name, reason: error.message)
                switch error {
                case .storage, .diskFull: return .failed(failure, upstream: nil)
                default: return .failed(failure, upstream: error)
                }
            }
        }
        let learned = remembered == nil ? answer : nil
        guard case .cover(let address) = answer else { return .done(answer: learned, keptImage: false) }
        do {
            return .done(answer: learned, keptImage: try await keep(address))
        } catch {
            if Task.isCancelled { return .notAttempted }
            return .failed(Failure(artist: album.artist, name: album.name, reason: error.description), upstream: nil)
        }
    }
}
