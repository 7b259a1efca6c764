import Foundation
import Logging
import MusicServers
import Stores
import VinylogueCore

/// "Keep a playlist 'This week, years ago' on my server": the one queue's
/// `JobKind.weeklyPlaylist` jobs. At each of the runner's looks, each
/// owner who keeps one (`KeptPlaylists`) whose week has changed — the week
/// `yearsAgo` back from now, in the owner's time zone, as the chart page
/// finds it — has a refresh queued, once per week however many instances
/// of a fleet ask. A run makes the week's playlist again on the owner's
/// server, as "Make it on …" does (`ServerPlaylist`), and notes what it did
/// for Settings.
///
/// Fenced: the server and the playlist are read under the job's claim, the
/// claim is read again just before the one write to the server, and the
/// note is written under it. A person who forgets their server, stops the
/// playlist or deletes their account deletes the job with it (in that
/// transaction), so a run under way stops before its write to the server
/// — unless that write has already begun, which cannot be called back —
/// and writes nothing more here.
public struct WeeklyPlaylists: JobHandler {
    public let kind = JobKind.weeklyPlaylist
    let store: any KeptPlaylists
    let access: MusicServerAccess
    /// Whose listening an owner's playlist is of: the account's name, or
    /// the household's "me"; nil when there is none.
    let person: @Sendable (ListOwner) async -> Username?
    /// The owner's time zone, where their weeks begin.
    let timeZone: @Sendable (ListOwner) async -> TimeZone
    /// A person's week `yearsAgo` back from a moment, in a zone, as a
    /// playlist (the archive's `weekPlaylist`, their albums grouped as they
    /// chose); nil when the archive does not hold them.
    let playlist: @Sendable (_ person: Username, _ yearsAgo: Int, _ now: Date, _ zone: TimeZone) async throws(SourceError) -> WeekPlaylist?
    let clock: WallClock
    let logger: Logger

    /// When a run the server refused is tried again: a quarter of an hour,
    /// doubling to six hours; after that the week waits for the next.
    public static let retries = RetrySchedule(first: 15 * 60, longest: 6 * 3600, tries: 6)

    public init(store: any KeptPlaylists, access: MusicServerAccess, person: @escaping @Sendable (ListOwner) async -> Username?,
                timeZone: @escaping @Sendable (ListOwner) async -> TimeZone,
                playlist: @escaping @Sendable (Username, Int, Date, TimeZone) async throws(SourceError) -> WeekPlaylist?,
                clock: WallClock, logger: Logger = Logger(label: "vinylogue.playlists")) {
        self.store = store
        self.access = access
        self.person = person
        self.timeZone = timeZone
        self.playlist = playlist
        self.clock = clock
        self.logger = logger
    }

    /// The week `yearsAgo` back from `now` in `timeZone`, as the chart page
    /// and `weekPlaylist` find it: its start.
    public static func week(yearsAgo: Int, from now: Date, timeZone: TimeZone) -> Int64 {
        let target = ChartWeekFinder(timeZone: timeZone).target(yearsAgo: yearsAgo, from: now)
        return LastFMWeekCalendar.week(containing: Int64(target.timeIntervalSince1970.rounded(.down))).from
    }

    public func look(at now: Date) async {
        await queueDue(at: now)
    }

    /// Queues the refresh of each kept playlist whose week has changed.
    /// Returns how many were queued.
    @discardableResult
    public func queueDue(at now: Date) async -> Int {
        let kept: [KeptPlaylist]
        do {
            kept = try await store.keptPlaylists()
        } catch {
            logger.warning("could not read the weekly playlists: \(error)")
            return 0
        }
        var queued = 0
        for playlist in kept {
            let week = Self.week(yearsAgo: playlist.yearsAgo, from: now, timeZone: await timeZone(playlist.owner))
            guard playlist.week != week else { continue }
            do {
                if try await store.queueKeptPlaylist(of: playlist.owner, week: week, at: now) { queued += 1 }
            } catch {
                logger.warning("could not queue a weekly playlist: \(error)")
            }
        }
        return queued
    }

    public func run(_ claim: JobClaim) async -> JobEnding {
        let begun: (server: MusicServerSetting, kept: KeptPlaylist)?
        do {
            begun = try await store.begin(claim)
        } catch {
            return .retry(at: clock.now.addingTimeInterval(60), reason: "The database could not be read: \(error).")
        }
        // Stopped, forgotten or erased before it began: nothing to do.
        guard let (setting, kept) = begun else { return .done }
        let outcome = await refresh(kept, on: setting, claim: claim)
        if Task.isCancelled { return .stopped }
        switch outcome {
        case .gone:
            return .done
        case .noted(let sentence):
            _ = await note(sentence, of: claim)
            // The years changed while it was made (the week queued meanwhile
            // found this run under way): made again, with the new years.
            if let now = try? await store.keptPlaylist(of: kept.owner), now.yearsAgo != kept.yearsAgo {
                return .retry(at: clock.now, reason: "The years changed while it was being made; it is made again.")
            }
            return .done
        case .refused(let sentence):
            let now = clock.now
            guard let wait = Self.retries.wait(after: claim.job.attempts) else {
                _ = await note(sentence + " It was tried \(claim.job.attempts) times; it is made again next week.", of: claim)
                return .failed(reason: sentence)
            }
            let at = now.addingTimeInterval(wait)
            _ = await note(sentence + " It is tried again \(Self.when(at, from: now)).", of: claim)
            return .retry(at: at, reason: sentence)
        }
    }

    /// How a refresh ended.
    enum Outcome: Equatable {
        /// Done, or nothing to do: the sentence for Settings.
        case noted(String)
        /// The server did not take it (for now): the sentence why.
        case refused(String)
        /// Its job went (stopped, forgotten, erased) before its write.
        case gone
    }

    func refresh(_ kept: KeptPlaylist, on setting: MusicServerSetting, claim: JobClaim) async -> Outcome {
        guard let person = await person(kept.owner) else {
            return .noted("There is nobody whose listening it would show: choose who is “me” on the list.")
        }
        let zone = await timeZone(kept.owner), now = clock.now
        let ago = kept.yearsAgo == 1 ? "a year" : "\(kept.yearsAgo) years"
        let week: WeekPlaylist?
        do {
            week = try await playlist(person, kept.yearsAgo, now, zone)
        } catch {
            return .refused("\(person.value)’s week could not be read: \(error.message)")
        }
        guard let week, !week.albums.isEmpty else {
            return .noted("Nothing was played this week \(ago) ago, so the playlist on your server was left as it was.")
        }
        let server: MusicServerAccess.Server
        switch MusicServerAccess.Server.parse(kind: setting.kind.rawValue, address: setting.address, username: setting.username,
                                              password: setting.password) {
        case .failure(let problem): return .noted(problem.sentence + " Change it in Settings.")
        case .success(let parsed): server = parsed
        }
        let playlist = week.playlist(labels: WeekLabels(timeZone: zone))
        let made = await access.withLibrary(server) { library in await make(playlist, on: library, claim: claim) }
        switch made {
        case .failure(let problem): return .noted(problem.sentence)
        case .success(let outcome): return outcome
        }
    }

    /// Matches `playlist` in `library` and, while the claim still holds, saves it there.
    func make(_ playlist: AlbumPlaylist, on library: any MusicLibrary, claim: JobClaim) async -> Outcome {
        do throws(MusicServerError) {
            let matched = try await ServerPlaylist.match(playlist, in: library, within: ServerPlaylist.matchBudget)
            guard matched.saved else {
                return .noted("None of the week’s \(matched.missing.count == 1 ? "album" : "\(matched.missing.count) albums") is in your library, "
                    + "so the playlist on your server was left as it was.")
            }
            // The claim again, just before the one write to the server.
            guard (try? await store.begin(claim)) != nil else { return .gone }
            let made = try await matched.save(on: library)
            var sentence = "\(made.replaced ? "Made again" : "Made") “\(made.name)”: "
                + (made.songs.count == 1 ? "1 song" : "\(made.songs.count) songs") + " of "
                + (made.found.count == 1 ? "1 album." : "\(made.found.count) albums.")
            if !made.missing.isEmpty {
                sentence += " Not in your library: " + made.missing.prefix(5).map { "\($0.name) (\($0.artist))" }.joined(separator: "; ")
                    + (made.missing.count > 5 ? " and \(made.missing.count - 5) more." : ".")
            }
            return .noted(sentence)
        } catch {
            return .refused(error.description)
        }
    }

    func note(_ sentence: String, of claim: JobClaim) async -> Bool {
        do {
            return try await store.note(sentence, of: claim, at: clock.now)
        } catch {
            logger.info("could not note a weekly playlist's run: \(error)")
            return false
        }
    }

    /// "in 15 minutes", "in 2 hours".
    static func when(_ at: Date, from now: Date) -> String {
        let minutes = Int((at.timeIntervalSince(now) / 60).rounded())
        if minutes < 90 { return minutes == 1 ? "in a minute" : "in \(minutes) minutes" }
        let hours = Int((Double(minutes) / 60).rounded())
        return "in \(hours) hours"
    }
}
