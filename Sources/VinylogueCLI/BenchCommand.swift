import ArgumentParser
import Archive
import Foundation
import VinylogueCore

/// `vinylogue bench`: measures the archive on a generated export.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark the archive: import (CSV and ZIP), weekly chart latency, every-year query, peak memory.")

    @Option(help: "Scrobbles in the generated export.")
    var scrobbles = 1_000_000

    @Option(name: .customLong("data-dir"), help: "Where to put the benchmark archive (default: a new temporary directory).")
    var dataDir: String?

    @Option(name: .customLong("database"),
            help: "Also measure a PostgreSQL archive (postgres://…), beside SQLite: the same import, charts and every-year query. Its rows are deleted afterwards.")
    var databaseURL: String?

    func run() async throws {
        guard scrobbles > 0 else { throw ValidationError("--scrobbles must be positive.") }
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("vinylogue-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temp) }
        let user = try Username("bench")
        let csv = temp.appendingPathComponent("scrobbles.csv")
        let span: Int64 = 15 * 365 * 86_400
        let end: Int64 = 1_760_000_000
        try BenchExport(count: scrobbles, start: end - span, end: end).write(to: csv)
        let size = (try? FileManager.default.attributesOfItem(atPath: csv.path)[.size] as? Int) ?? 0
        print("Generated \(grouped(scrobbles)) scrobbles (\(size / 1_000_000) MB CSV) over 15 years.")

        let directory = dataDir.map { URL(fileURLWithPath: $0) } ?? temp.appendingPathComponent("data")
        let store: SQLiteScrobbleStore
        do { store = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: directory)) } catch { throw CommandFailure(error) }

        let clock = ContinuousClock()
        let importStart = clock.now
        // The generated export ends at `end`: judge its times from there,
        // whatever the machine's clock says.
        let importer = ScrobbleImporter(store: store, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(end))))
        let csvPath = csv.path
        let summary = try await DedicatedThread.run(named: "vinylogue.import") { try importer.importFile(at: csvPath, for: user) }
        let importTime = clock.now - importStart
        let seconds = Self.seconds(importTime)
        let csvRate = Double(summary.imported + summary.duplicates) / seconds
        print("Import: \(grouped(summary.imported)) scrobbles (\(grouped(summary.duplicates)) duplicates, \(summary.rejectedCount) rejected) "
            + "in \(Self.format(seconds, 2)) s, \(grouped(Int(csvRate))) scrobbles/s")

        // The same export as a ZIP archive (deflated, as export sites send
        // it), into an archive of its own: each member is inflated twice
        // (checked, then read), so this is what a ZIP costs over the file.
        let zip = temp.appendingPathComponent("export.zip")
        try ExportPacking.pack(file: csv.path, as: "scrobbles.csv", into: zip.path)
        let zipSize = (try? FileManager.default.attributesOfItem(atPath: zip.path)[.size] as? Int) ?? 0
        let zipStore: SQLiteScrobbleStore
        do { zipStore = SQLiteScrobbleStore(database: try ArchiveDatabase(directory: temp.appendingPathComponent("data-zip"))) } catch {
            throw CommandFailure(error)
        }
        let zipImporter = ScrobbleImporter(store: zipStore, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(end))))
        let zipPath = zip.path
        let zipStart = clock.now
        let zipSummary = try await DedicatedThread.run(named: "vinylogue.import") { try zipImporter.importFile(at: zipPath, for: user) }
        let zipSeconds = Self.seconds(clock.now - zipStart)
        let zipRate = Double(zipSummary.imported + zipSummary.duplicates) / zipSeconds
        print("Import from a ZIP (\(zipSize / 1_000_000) MB): \(grouped(zipSummary.imported)) scrobbles in \(Self.format(zipSeconds, 2)) s, "
            + "\(grouped(Int(zipRate))) scrobbles/s (\(Self.format(100 * zipRate / csvRate, 0))% of the CSV rate)")

        // The same file again: every row meets the duplicate rule, which
        // reads each batch's neighbourhood back from the archive.
        let againStart = clock.now
        let again = try await DedicatedThread.run(named: "vinylogue.import") { try importer.importFile(at: csvPath, for: user) }
        let againSeconds = Self.seconds(clock.now - againStart)
        print("Import of the same CSV again: \(grouped(again.imported)) new, \(grouped(again.duplicates)) duplicates "
            + "in \(Self.format(againSeconds, 2)) s, \(grouped(Int(Double(again.imported + again.duplicates) / againSeconds))) scrobbles/s")

        let source = ArchiveChartSource(store: store)
        let list = try await source.chartList(for: user)
        var latencies: [Double] = []
        for round in 0..<3 {
            for week in list.weeks {
                let start = clock.now
                let chart = try await source.chart(for: user, kind: .album, week: week)
                let elapsed = Self.seconds(clock.now - start)
                precondition(chart.week == week)
                if round > 0 { latencies.append(elapsed * 1000) }
            }
        }
        latencies.sort()
        // The same charts timed on a thread of their own, without the hop to
        // GRDB's reader queue and back that an awaited read (the server's)
        // pays: the query itself.
        let weeks = list.weeks
        var blocking = try await DedicatedThread.run(named: "vinylogue.bench") { () throws -> [Double] in
            var times: [Double] = []
            for round in 0..<3 {
                for week in weeks {
                    let start = ContinuousClock.now
                    _ = try store.chartsBlocking(.album, of: user, weeks: [week])
                    if round > 0 { times.append(Self.seconds(ContinuousClock.now - start) * 1000) }
                }
            }
            return times
        }
        blocking.sort()
        print("Weekly album chart over \(list.weeks.count) weeks (×2), awaited as the server reads it: "
            + "p50 \(Self.format(Self.percentile(latencies, 0.5), 3)) ms, p99 \(Self.format(Self.percentile(latencies, 0.99), 3)) ms")
        print("  the query alone, on a thread of its own: "
            + "p50 \(Self.format(Self.percentile(blocking, 0.5), 3)) ms, p99 \(Self.format(Self.percentile(blocking, 0.99), 3)) ms")

        var everyYear: [Double] = []
        var years = 0
        let now = Date(timeIntervalSince1970: TimeInterval(end))
        for _ in 0..<20 {
            let start = clock.now
            let result = try await source.everyYear(for: user, limit: 5, now: now, timeZone: .gmt)
            everyYear.append(Self.seconds(clock.now - start) * 1000)
            years = result.years.count
        }
        everyYear.sort()
        print("Every-year query (\(years) years, top 5): p50 \(Self.format(Self.percentile(everyYear, 0.5), 2)) ms, "
            + "max \(Self.format(everyYear.last ?? 0, 2)) ms")
        try await Self.benchAlbumPages(source, user: user, weeks: list.weeks, now: now)
        try await Self.benchShareCards()
        print("Peak memory (VmHWM): \(Self.peakMemory() ?? "unknown")")

        if let databaseURL {
            print("")
            print("PostgreSQL (\(Self.redacted(databaseURL))), the same export:")
            try await PostgresBench(url: databaseURL, csv: csvPath, end: end).run()
        }
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

    func write(to url: URL) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var rng = SplitMix64(seed: 42)
        let albums = (0..<4000).map { i in (artist: "Artist \(i % 1500)", album: "Album \(i)", mbid: i % 3 == 0 ? "" : "mbid-\(i)") }
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
            buffer += "\(instant),\"01 Jan 2020, 00:00\",\(album.artist),,\"\(album.album)\",\(album.mbid),Track \(track),\n"
            if buffer.utf8.count > 1 << 20 {
                handle.write(Data(buffer.utf8))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer.utf8))
    }
}
