import ArgumentParser
import SQLiteStore
import Stores
import Sync
import Imports
import Foundation
import VinylogueCore

/// `vinylogue bench`: measures the archive on a generated export.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark the archive at several sizes: import (CSV and ZIP), weekly chart latency, every-year query, album life, rediscover, editions folded off and on, peak memory.")

    @Option(help: ArgumentHelp("Scrobbles in each archive measured, one after another (comma-separated).",
                               discussion: "Up to 1,000,000 an archive is one person's generated export; above, people of 1,000,000 each."))
    var scrobbles = BenchSizes([100_000, 1_000_000, 10_000_000])

    @Option(name: .customLong("data-dir"), help: "Where to put the benchmark archives (default: a new temporary directory).")
    var dataDir: String?

    @Option(name: .customLong("database"),
            help: "Also measure a PostgreSQL archive (postgres://…) at each size up to 1,000,000, beside SQLite. Its rows are deleted afterwards.")
    var databaseURL: String?

    /// The largest archive one generated person has; bigger ones are made of several.
    static let personSize = 1_000_000
    /// Where each generated history ends (and the bench's "now").
    static let end: Int64 = 1_760_000_000

    func run() async throws {
        for (n, size) in scrobbles.sizes.enumerated() {
            if n > 0 { print("") }
            try await benchArchive(of: size)
        }
        print("")
        try await Self.benchShareCards()
    }

    /// Every figure for one archive of `size` scrobbles.
    func benchArchive(of size: Int) async throws {
        let people = (size + Self.personSize - 1) / Self.personSize
        let each = size / people
        print("== An archive of \(grouped(size)) scrobbles" + (people > 1 ? " (\(people) people of \(grouped(each)) each)" : ""))
        Self.resetPeakMemory()
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temp) }
        let directory = dataDir.map { URL(fileURLWithPath: $0).appendingPathComponent("\(size)") } ?? temp.appendingPathComponent("data")
        let store: SQLiteScrobbleStore
        // The server's request threads, read on as `serve` reads (`benchReads`).
        let requestThreads = RequestThreads(count: RequestThreads.standardCount)
        defer { requestThreads.stop() }
        do {
            store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: directory, progress: MigrationStep.toStandardError,
                                                                      requestThreads: requestThreads))
        } catch {
            throw CommandFailure(error)
        }
        let span: Int64 = 15 * 365 * 86_400
        let end = Self.end
        // The generated export ends at `end`: judge its times from there,
        // whatever the machine's clock says.
        let importer = ScrobbleImporter(store: store, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(end))))
        let clock = ContinuousClock()
        var wall = Duration.zero
        var cpu = 0.0
        var stored = 0, duplicates = 0
        let user = try Username("bench")
        var csvPath = ""
        for person in 0..<people {
            let csv = temp.appendingPathComponent("scrobbles-\(person).csv")
            try BenchExport(count: each, start: end - span, end: end, seed: 42 + UInt64(person)).write(to: csv)
            if person == 0 {
                let bytes = (try? FileManager.default.attributesOfItem(atPath: csv.path)[.size] as? Int) ?? 0
                print("Generated \(grouped(each)) scrobbles (\(bytes / 1_000_000) MB CSV) over 15 years" + (people > 1 ? " for each person." : "."))
            }
            let who = person == 0 ? user : try Username("bench-\(person)")
            let path = csv.path
            let (cpuBefore, begin) = (Self.cpuSeconds(), clock.now)
            let summary = try await DedicatedThread.run(named: "vinylogue.import") { try importer.importFile(at: path, for: who) }
            wall += clock.now - begin
            cpu += Self.cpuSeconds() - cpuBefore
            stored += summary.imported
            duplicates += summary.duplicates
            if person == 0 { csvPath = path } else { try? FileManager.default.removeItem(at: csv) }
        }
        let seconds = Self.seconds(wall)
        print("Import: \(grouped(stored)) scrobbles (\(grouped(duplicates)) duplicates) in \(Self.format(seconds, 2)) s "
            + "(\(Self.format(cpu, 2)) s of CPU), \(grouped(Int(Double(stored + duplicates) / seconds))) scrobbles/s")
        if size <= Self.personSize { try await benchReimports(csv: csvPath, into: store, importer: importer, user: user, temp: temp) }

        let source = ArchiveChartSource(store: store)
        let weeks = try await source.chartList(for: user).weeks
        // Reads go round every person, so a size of several people is
        // measured across all of them, not on the first one's rows alone.
        let users = try [user] + (1..<max(1, people)).map { try Username("bench-\($0)") }
        try await Self.benchReads(source, users: users, weeks: weeks, now: Date(timeIntervalSince1970: TimeInterval(end)),
                                  requestThreads: requestThreads) { who, week in
            _ = try store.chartsBlocking(.album, of: who, weeks: [week])
        }
        if size <= Self.personSize {
            try await Self.benchRefolding(store, user: user, weeks: weeks, now: Date(timeIntervalSince1970: TimeInterval(end)))
        }
        print("Peak memory (VmHWM) of this size (import and reads): \(Self.peakMemory() ?? "unknown")")

        if let databaseURL, size <= Self.personSize {
            print("PostgreSQL (\(Self.redacted(databaseURL))), the same export:")
            try await PostgresBench(url: databaseURL, csv: csvPath, end: end).run()
        }
    }

    /// The same export from a ZIP archive into an archive of its own, then
    /// the same CSV again into the first.
    func benchReimports(csv: String, into store: SQLiteScrobbleStore, importer: ScrobbleImporter, user: Username, temp: URL) async throws {
        let clock = ContinuousClock()
        // Each member is inflated twice (checked, then read), so this is
        // what a ZIP costs over the file.
        let zip = temp.appendingPathComponent("export.zip")
        try ExportPacking.pack(file: csv, as: "scrobbles.csv", into: zip.path)
        let zipSize = (try? FileManager.default.attributesOfItem(atPath: zip.path)[.size] as? Int) ?? 0
        let zipStore: SQLiteScrobbleStore
        do { zipStore = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: temp.appendingPathComponent("data-zip"))) } catch {
            throw CommandFailure(error)
        }
        let zipImporter = ScrobbleImporter(store: zipStore, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(Self.end))))
        let zipPath = zip.path
        let zipStart = clock.now
        let zipSummary = try await DedicatedThread.run(named: "vinylogue.import") { try zipImporter.importFile(at: zipPath, for: user) }
        let zipSeconds = Self.seconds(clock.now - zipStart)
        print("Import from a ZIP (\(zipSize / 1_000_000) MB): \(grouped(zipSummary.imported)) scrobbles in \(Self.format(zipSeconds, 2)) s, "
            + "\(grouped(Int(Double(zipSummary.imported + zipSummary.duplicates) / zipSeconds))) scrobbles/s")
        try? FileManager.default.removeItem(at: temp.appendingPathComponent("data-zip"))

        // Every row meets the duplicate rule, which reads each batch's
        // neighbourhood back from the archive.
        let againStart = clock.now
        let again = try await DedicatedThread.run(named: "vinylogue.import") { try importer.importFile(at: csv, for: user) }
        let againSeconds = Self.seconds(clock.now - againStart)
        print("Import of the same CSV again: \(grouped(again.imported)) new, \(grouped(again.duplicates)) duplicates "
            + "in \(Self.format(againSeconds, 2)) s, \(grouped(Int(Double(again.imported + again.duplicates) / againSeconds))) scrobbles/s")
    }

    /// Every week's album chart (awaited as the server reads it, and through
    /// `blocking`, on a thread of its own, when given), the every-year
    /// query, album life and rediscover, each read of the next of `users`
    /// in turn; both stores.
    static func benchReads(_ source: ArchiveChartSource, users: [Username], weeks: [ChartWeek], now: Date,
                           requestThreads: RequestThreads? = nil,
                           blocking: (@Sendable (Username, ChartWeek) throws -> Void)? = nil) async throws {
        let clock = ContinuousClock()
        let across = users.count > 1 ? ", across \(users.count) people in turn" : ""
        func awaitedCharts() async throws -> (latencies: [Double], rows: Int) {
            var latencies: [Double] = []
            var rows = 0
            for round in 0..<3 {
                for (index, week) in weeks.enumerated() {
                    let user = users[(index + round) % users.count]
                    let start = clock.now
                    let chart = try await source.chart(for: user, kind: .album, week: week)
                    let elapsed = seconds(clock.now - start)
                    precondition(chart.week == week)
                    if round > 0 { latencies.append(elapsed * 1000) } else { rows += chart.entries.count }
                }
            }
            return (latencies.sorted(), rows)
        }
        // The server's requests run on its request threads, where a chart
        // is read without leaving the thread (`RequestThreads`).
        let (latencies, rows) = if let requestThreads { try await requestThreads.running { try await awaitedCharts() } }
                                else { try await awaitedCharts() }
        print("Weekly album chart over \(weeks.count) weeks (×2\(across), \(rows / max(1, weeks.count)) rows a week on average), awaited as the server reads it: "
            + "p50 \(format(percentile(latencies, 0.5), 3)) ms, p99 \(format(percentile(latencies, 0.99), 3)) ms")
        if requestThreads != nil {
            let (hopping, _) = try await awaitedCharts()
            print("  awaited from Swift's pool (the read goes to the database's queue and back): "
                + "p50 \(format(percentile(hopping, 0.5), 3)) ms, p99 \(format(percentile(hopping, 0.99), 3)) ms")
        }
        if let blocking {
            // The query itself, called directly on a thread of its own.
            var times = try await DedicatedThread.run(named: "vinylogue.bench") { () throws -> [Double] in
                var times: [Double] = []
                for round in 0..<3 {
                    for (index, week) in weeks.enumerated() {
                        let start = ContinuousClock.now
                        try blocking(users[(index + round) % users.count], week)
                        if round > 0 { times.append(seconds(ContinuousClock.now - start) * 1000) }
                    }
                }
                return times
            }
            times.sort()
            print("  the query alone, on a thread of its own: p50 \(format(percentile(times, 0.5), 3)) ms, p99 \(format(percentile(times, 0.99), 3)) ms")
        }
        var everyYear: [Double] = []
        var years = 0
        for run in 0..<20 {
            let user = users[run % users.count]
            let start = clock.now
            years = try await source.everyYear(for: user, limit: 5, now: now, timeZone: .gmt).years.count
            everyYear.append(seconds(clock.now - start) * 1000)
        }
        everyYear.sort()
        print("Every-year query (\(years) years, top 5\(across)): p50 \(format(percentile(everyYear, 0.5), 2)) ms, max \(format(everyYear.last ?? 0, 2)) ms")
        try await benchAlbumPages(source, users: users, weeks: weeks, now: now)
    }

    /// Starts the process's peak resident set (VmHWM) again from what it
    /// holds now (Linux: writing 5 to /proc/self/clear_refs), so each size
    /// reports its own peak.
    static func resetPeakMemory() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// CPU time (user and system) the process has used, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// `url` without its password, for printing.
    static func redacted(_ url: String) -> String {
        guard var parts = URLComponents(string: url) else { return "the database given" }
        if parts.password != nil { parts.password = "…" }
        return parts.string ?? "the database given"
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    static func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

    /// The process's peak resident set, from /proc/self/status.
    static func peakMemory() -> String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .map { $0.dropFirst(6).trimmingCharacters(in: .whitespaces) }
    }
}

/// A generated Last.fm CSV export (with the uts header), newest first like
/// the real thing: a catalogue of albums played with a skewed popularity.
struct BenchExport {
    let count: Int
    let start: Int64
    let end: Int64
    var seed: UInt64 = 42

    func write(to url: URL) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var rng = SplitMix64(seed: seed)
        // Two albums in three carry a release id (a UUID, as MusicBrainz
        // gives them); one in a hundred names its neighbour's, so the
        // archive ties a dozen pairs of albums by release as it imports.
        func release(_ i: Int) -> String { String(format: "%08x-0000-4000-8000-%012x", i, i) }
        // As a Last.fm export is: one album in eight is played in the
        // history's last third under a streaming service's reissue name
        // (with a release id of its own, as a reissue has), and one in fifty
        // is a compilation, scrobbled under each track's artist, tied only
        // by its release id where it has one.
        let albums = (0..<4000).map { i in
            BenchAlbum(artist: "Artist \(i % 1500)", album: i % 50 == 7 ? "Hits Collection \(i)" : "Album \(i)",
                       mbid: i % 3 == 0 ? "" : release(i % 100 == 1 ? i - 1 : i),
                       reissue: i % 8 == 3 ? Self.reissueNames[(i / 8) % Self.reissueNames.count] : nil, compilation: i % 50 == 7,
                       reissueMBID: i % 3 == 0 ? "" : release(100_000 + i))
        }
        let reissuedFrom = end - (end - start) / 3
        var buffer = "uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid\n"
        let step = Double(end - start) / Double(count)
        var albumIndex = 0
        for i in 0..<count {
            let instant = end - Int64(Double(i) * step) - Int64(rng.next() % UInt64(max(1, step)))
            // Albums are played in sessions: usually the next track of the same album.
            if rng.next() % 10 == 0 {
                let r = rng.unit()
                albumIndex = Int(r * r * Double(albums.count))
            }
            let album = albums[albumIndex]
            let track = Int(rng.next() % 12) + 1
            let artist = album.compilation ? "Artist \((albumIndex + track * 37) % 1500)" : album.artist
            let (name, mbid) = if let reissue = album.reissue, instant >= reissuedFrom {
                ("\(album.album) \(reissue)", album.reissueMBID)
            } else {
                (album.album, album.mbid)
            }
            buffer += "\(instant),\"01 Jan 2020, 00:00\",\(artist),,\"\(name)\",\(mbid),Track \(track),\n"
            if buffer.utf8.count > 1 << 20 {
                handle.write(Data(buffer.utf8))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer.utf8))
    }
}

/// One album of `BenchExport`'s catalogue.
struct BenchAlbum {
    let artist: String
    let album: String
    let mbid: String
    /// The decoration its plays carry in the history's last third.
    let reissue: String?
    /// Scrobbled under each track's artist.
    let compilation: Bool
    let reissueMBID: String
}

extension BenchExport {
    /// Reissue names as streaming services give them (each folds to the album).
    static let reissueNames = ["(Remastered)", "[Deluxe Edition]", "- 2011 Remaster", "(Super Deluxe)", "(Expanded Edition)",
                               "(25th Anniversary Edition)", "(Remastered 2009)", "[Explicit]"]
}

/// The archive sizes `vinylogue bench` measures: "100000,1000000".
struct BenchSizes: ExpressibleByArgument {
    let sizes: [Int]

    init(_ sizes: [Int]) { self.sizes = sizes }

    init?(argument: String) {
        let sizes = argument.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")) }
        guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
        self.sizes = sizes.compactMap { $0 }
    }

    var defaultValueDescription: String { sizes.map(String.init).joined(separator: ",") }
}
