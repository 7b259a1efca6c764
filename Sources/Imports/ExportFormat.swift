/// The kinds of export file the importer reads, recognised from the
/// content (or named with `--format`).
public enum ExportFormat: String, Sendable, Hashable, CaseIterable {
    /// Last.fm scrobble export without a header: `artist,album,track,date`.
    /// Its dates have minute resolution, so two plays of one track by one
    /// artist in the same minute share a dedupe key and count once.
    case lastFMCSV = "Last.fm CSV export (artist,album,track,date)"
    /// Last.fm scrobble export with the header `uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid`.
    case lastFMCSVWithHeader = "Last.fm CSV export (uts,utc_time,artist,…)"
    /// Last.fm JSON export (`scrobbles-*.json`): an array of pages, each an
    /// array of `user.getRecentTracks` track objects.
    case lastFMJSON = "Last.fm JSON export (scrobbles-*.json)"
    /// A JSON array of ListenBrainz listens.
    case listenBrainzJSON = "ListenBrainz listens (JSON array)"
    /// ListenBrainz listens, one JSON object per line (`listens/YYYY/M.jsonl`).
    case listenBrainzJSONLines = "ListenBrainz listens (JSON lines)"
    /// Spotify extended streaming history (`Streaming_History_Audio_*.json`, `endsong_*.json`).
    case spotifyJSON = "Spotify extended streaming history (JSON)"
    /// Spotify account data (`StreamingHistory*.json`): artist, track and
    /// end time only, no album.
    case spotifyAccountJSON = "Spotify account data streaming history (StreamingHistory*.json)"
    /// Rockbox and other portable players: Audioscrobbler 1.1 `.scrobbler.log`.
    case scrobblerLog = "Rockbox .scrobbler.log (Audioscrobbler 1.1)"
    /// Maloja's own export: `{"maloja": {...}, "scrobbles": [...]}`.
    case malojaJSON = "Maloja export (maloja_export_*.json)"

    /// The name `--format` takes.
    public var name: String {
        switch self {
        case .lastFMCSV, .lastFMCSVWithHeader: "lastfm-csv"
        case .lastFMJSON: "lastfm-json"
        case .listenBrainzJSON, .listenBrainzJSONLines: "listenbrainz"
        case .spotifyJSON: "spotify-extended"
        case .spotifyAccountJSON: "spotify-account"
        case .scrobblerLog: "scrobbler-log"
        case .malojaJSON: "maloja"
        }
    }

    /// The names `--format` accepts, in the order they are listed.
    public static let names = ["lastfm-csv", "lastfm-json", "listenbrainz", "spotify-extended", "spotify-account", "scrobbler-log", "maloja"]

    /// What a person reads when a file is not recognised: every format, briefly.
    public static let known = "Last.fm CSV or JSON exports, ListenBrainz exports (ZIP, JSON or JSON lines), "
        + "Spotify extended streaming history or account data (ZIP or JSON), Rockbox .scrobbler.log files and Maloja exports"
}

/// A format named on the command line (`--format`): it replaces detection,
/// though the bytes still decide between layouts of one format (CSV with or
/// without header, ListenBrainz array or lines).
public struct FormatChoice: Sendable, Hashable {
    public let name: String

    /// `nil` when `name` is not one of `ExportFormat.names`.
    public init?(_ name: String) {
        let lowered = name.lowercased()
        guard ExportFormat.names.contains(lowered) else { return nil }
        self.name = lowered
    }
}

/// Recognises an export from its first bytes (up to `FormatSniffer.window`).
/// It only answers when the content says so: nothing is taken for CSV (or
/// anything else) by default.
enum FormatSniffer {
    /// Bytes looked at before deciding.
    static let window = 64 << 10

    static func detect(_ head: ArraySlice<UInt8>, choice: FormatChoice?) -> ExportFormat? {
        let first = head.first { !JSONArraySplitter.isSpace($0) }
        if let choice { return chosen(choice, head, first) }
        switch first {
        case UInt8(ascii: "#"):
            return head.starts(with: Array("#AUDIOSCROBBLER/".utf8)) ? .scrobblerLog : nil
        case UInt8(ascii: "["):
            if contains(head, "\"ms_played\"") || contains(head, "\"master_metadata_track_name\"") { return .spotifyJSON }
            if contains(head, "\"listened_at\"") || contains(head, "\"track_metadata\"") { return .listenBrainzJSON }
            if contains(head, "\"msPlayed\"") && contains(head, "\"endTime\"") { return .spotifyAccountJSON }
            if contains(head, "\"uts\"") && contains(head, "\"#text\"") { return .lastFMJSON }
            return nil
        case UInt8(ascii: "{"):
            if let line = firstLine(head), looksLikeListen(line) { return .listenBrainzJSONLines }
            if contains(head, "\"scrobbles\"") && (contains(head, "\"maloja\"") || contains(head, "\"track\"")) { return .malojaJSON }
            return nil
        case nil:
            return nil
        default:
            return csvLayout(head)
        }
    }

    private static func chosen(_ choice: FormatChoice, _ head: ArraySlice<UInt8>, _ first: UInt8?) -> ExportFormat {
        switch choice.name {
        case "lastfm-json": return .lastFMJSON
        case "listenbrainz": return first == UInt8(ascii: "[") ? .listenBrainzJSON : .listenBrainzJSONLines
        case "spotify-extended": return .spotifyJSON
        case "spotify-account": return .spotifyAccountJSON
        case "scrobbler-log": return .scrobblerLog
        case "maloja": return .malojaJSON
        default:
            guard let line = firstLine(head) else { return .lastFMCSV }
            return CSVRows.detect(firstLine: line).1 ? .lastFMCSVWithHeader : .lastFMCSV
        }
    }

    /// A Last.fm CSV: the `uts,...` header, or a first line of four fields
    /// whose last is shaped like `31 Jan 2020 18:25`.
    private static func csvLayout(_ head: ArraySlice<UInt8>) -> ExportFormat? {
        guard let line = firstLine(head) else { return nil }
        if CSVRows.detect(firstLine: line).isHeader { return .lastFMCSVWithHeader }
        guard case .success(let fields) = CSVLine.fields(line), fields.count == 4, isDateShaped(fields[3]) else { return nil }
        return .lastFMCSV
    }

    /// `D[D] Mon YYYY[,] HH:MM[:SS]`, whatever the numbers (their range is
    /// checked per line, with a line number, when the line is read).
    static func isDateShaped(_ text: String) -> Bool {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," })
        guard parts.count == 4, parts[0].count <= 2, parts[0].allSatisfy(\.isASCIIDigit), parts[1].count == 3,
              parts[1].allSatisfy(\.isLetter), parts[2].allSatisfy(\.isASCIIDigit), !parts[2].isEmpty else { return false }
        let clock = parts[3].split(separator: ":")
        return (2...3).contains(clock.count) && clock.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }
    }

    /// The first line of `head` without its line break, if it ends inside the window
    /// (or the window holds the whole member).
    static func firstLine(_ head: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let end = head.firstIndex(of: UInt8(ascii: "\n")) ?? head.endIndex
        return LineSplitter.trimCR(head[head.startIndex..<end])
    }

    private static func looksLikeListen(_ line: ArraySlice<UInt8>) -> Bool {
        contains(line, "\"listened_at\"") || contains(line, "\"track_metadata\"")
    }

    static func contains(_ bytes: ArraySlice<UInt8>, _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard let first = needle.first, bytes.count >= needle.count else { return false }
        var i = bytes.startIndex
        let last = bytes.endIndex - needle.count
        while i <= last {
            if bytes[i] == first, bytes[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
