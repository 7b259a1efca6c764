import Foundation
import Stores
import VinylogueCore

/// Reads one export stream (a file, or one member of a ZIP archive) as its
/// bytes arrive: skips a byte-order mark, recognises the format from the
/// first `FormatSniffer.window` bytes, then hands each line or JSON element
/// to the parser of that format, which passes scrobbles and rejections to
/// the import's `ImportRun`.
///
/// Push-based (`feed`, then `finish`) so that a file read in chunks and a
/// ZIP member inflated by ZIPFoundation's consumer closure take the same path.
struct MemberReader {
    private enum Parser {
        case sniffing
        case lines(LineSplitter)
        case array(JSONArraySplitter)
        /// Not recognised: the rest of the bytes are dropped.
        case ignoring
    }

    let choice: FormatChoice?
    /// The zone of a portable player's clock, for `.scrobbler.log` files marked `#TZ/UNKNOWN`.
    let playerTimeZone: TimeZone?
    /// Set once this stream said `#TZ/UNKNOWN` and a zone was given.
    private var playerClock: TimeZone?
    private(set) var format: ExportFormat?
    private var parser = Parser.sniffing
    private var head: [UInt8] = []
    private var csv: CSVRows?
    /// The stream held nothing but white space (or nothing at all).
    private(set) var wasEmpty = false

    init(choice: FormatChoice?, playerTimeZone: TimeZone? = nil) {
        self.choice = choice
        self.playerTimeZone = playerTimeZone
    }

    /// True once the first bytes were looked at and matched no format.
    var isUnrecognised: Bool { format == nil && !wasEmpty }

    mutating func feed(_ chunk: [UInt8], _ run: inout ImportRun) throws {
        switch parser {
        case .sniffing:
            head += chunk
            if head.count >= FormatSniffer.window { try start(&run) }
        case .lines(var splitter):
            parser = .ignoring
            try splitter.feed(chunk) { line, number in try handle(line, number, &run) }
            parser = .lines(splitter)
        case .array(var splitter):
            parser = .ignoring
            let format = self.format
            try splitter.feed(chunk) { event in try Self.handle(event, format, &run) }
            parser = .array(splitter)
        case .ignoring:
            return
        }
    }

    mutating func finish(_ run: inout ImportRun) throws {
        if case .sniffing = parser {
            if Self.withoutBOM(head[...]).allSatisfy(JSONArraySplitter.isSpace) {
                run.empty()
                wasEmpty = true
                parser = .ignoring
                return
            }
            try start(&run)
        }
        switch parser {
        case .sniffing, .ignoring: return
        case .lines(var splitter):
            parser = .ignoring
            try splitter.finish { line, number in try handle(line, number, &run) }
        case .array(var splitter):
            parser = .ignoring
            let format = self.format
            try splitter.finish { event in try Self.handle(event, format, &run) }
        }
    }

    private static func withoutBOM(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.starts(with: FileChunks.byteOrderMark) ? bytes.dropFirst(3) : bytes
    }

    /// Decides the format from `head` and feeds it to that format's parser.
    private mutating func start(_ run: inout ImportRun) throws {
        let bytes = Self.withoutBOM(head[...])
        head = []
        guard let format = FormatSniffer.detect(bytes.prefix(FormatSniffer.window), choice: choice) else {
            parser = .ignoring
            return
        }
        self.format = format
        run.began(format)
        if format == .spotifyAccountJSON {
            run.note("Spotify account data has no album names: its plays are kept with an empty album, "
                + "so they count in artist and track charts but not in album charts.")
        }
        switch format {
        case .lastFMJSON, .listenBrainzJSON, .spotifyJSON, .spotifyAccountJSON:
            parser = .array(JSONArraySplitter())
        case .malojaJSON:
            parser = .array(JSONArraySplitter(arrayAtKey: "scrobbles"))
        case .lastFMCSV, .lastFMCSVWithHeader, .listenBrainzJSONLines, .scrobblerLog:
            parser = .lines(LineSplitter())
        }
        try feed(Array(bytes), &run)
    }

    private mutating func handle(_ line: LineSplitter.Line, _ number: Int, _ run: inout ImportRun) throws {
        let text: ArraySlice<UInt8>
        switch line {
        case .text(let t): text = t
        case .tooLong(let bytes):
            return run.reject(number, "the line is \(bytes) bytes long, over the \(LineSplitter.maxLineLength >> 20) MiB limit for one line")
        }
        switch format {
        case .listenBrainzJSONLines:
            guard !text.allSatisfy(JSONArraySplitter.isSpace) else { return }
            try run.handle(ListenObjects.outcome(Array(text), as: .listenBrainzJSONLines), line: number)
        case .scrobblerLog:
            var outcome = ScrobblerLogLine.outcome(text)
            if case .noted = outcome {
                // #TZ/UNKNOWN: the times are the player's wall clock.
                if let zone = playerTimeZone {
                    playerClock = zone
                    outcome = .noted(ScrobblerLogLine.convertedNote(zone))
                }
            } else if case .scrobble(let scrobble, let origin) = outcome, let zone = playerClock {
                outcome = .scrobble(ScrobblerLogLine.fromWallClock(scrobble, in: zone), origin)
            }
            try run.handle(outcome, line: number)
        default:
            if csv == nil {
                let (rows, isHeader) = CSVRows.detect(firstLine: text)
                csv = rows
                if isHeader { return }
            }
            guard !text.isEmpty else { return }
            switch csv!.scrobble(text) {
            case .success(let scrobble): try run.add(scrobble, origin: .lastFMExport, line: number)
            case .failure(let problem): run.reject(number, problem.reason)
            }
        }
    }

    private static func handle(_ event: JSONArraySplitter.Event, _ format: ExportFormat?, _ run: inout ImportRun) throws {
        switch event {
        case .element(let bytes, let line):
            guard let format else { return }
            if format == .lastFMJSON {
                for outcome in ListenObjects.lastFMPage(bytes) { try run.handle(outcome, line: line) }
            } else {
                try run.handle(ListenObjects.outcome(bytes, as: format), line: line)
            }
        case .problem(let reason, let line): run.reject(line, reason)
        }
    }
}
