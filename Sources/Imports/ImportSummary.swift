import VinylogueCore

/// One line (or JSON element) the importer could not use.
public struct RejectedLine: Sendable, Hashable, CustomStringConvertible {
    /// The archive member or directory entry it is in; `nil` for a single file.
    public let member: String?
    /// 1-based line number in the file (for a JSON element: where it starts).
    public let line: Int
    public let reason: String

    public init(member: String? = nil, line: Int, reason: String) {
        self.member = member
        self.line = line
        self.reason = reason
    }

    public var description: String { (member.map { "\($0), " } ?? "") + "line \(line): \(reason)" }
}

/// What became of one member of a ZIP archive (or one file of a directory).
public struct MemberSummary: Sendable, Hashable {
    /// What happened to a member as a whole.
    public enum Outcome: Sendable, Hashable {
        /// Read as `format` (its counts are in the summary).
        case read(ExportFormat)
        /// Not listening history (account details, feedback, podcasts,
        /// videos, a ReadMe): left alone, with the reason.
        case skipped(String)
        /// Damaged, or too large once inflated: nothing of it was imported.
        case refused(String)
    }

    public let name: String
    public var outcome: Outcome
    public var imported = 0
    public var duplicates = 0
    public var rejectedCount = 0
    /// Entries that are fine but not scrobbles, by reason.
    public var skipped: [String: Int] = [:]
    /// Things a person should know about this member's scrobbles (no albums, times in an unknown zone).
    public var notes: [String] = []

    public init(name: String, outcome: Outcome) {
        self.name = name
        self.outcome = outcome
    }
}

/// What an import did.
public struct ImportSummary: Sendable, Hashable {
    /// The format of a single file, or of the first member read.
    public var format: ExportFormat?
    public var imported = 0
    /// Scrobbles already in the archive (or repeated in the file), by the
    /// archive's duplicate rule (`SQLiteScrobbleStore.sameListenWindow`).
    public var duplicates = 0
    /// Entries that are fine but not scrobbles, by reason (podcasts, short plays).
    public var skipped: [String: Int] = [:]
    /// How many lines were rejected in all.
    public var rejectedCount = 0
    /// The first `ScrobbleImporter.rejectionsKept` rejected lines, in file order.
    public var rejected: [RejectedLine] = []
    /// Per member, in the order read, for a ZIP archive or a directory;
    /// one entry for a single file.
    public var members: [MemberSummary] = []
    /// Notes for the whole import (see `MemberSummary.notes`), without repeats.
    public var notes: [String] = []
    /// True when the file given was a ZIP archive or a directory.
    public var isCollection = false
    /// The album choice a Vinylogue export carried (`AlbumFoldingMember`),
    /// for the caller to bring back.
    public var albumFolding: AlbumFolding?
    /// The choices about single albums it carried, to make again in order.
    public var albumChoices: [AlbumChoiceChange] = []

    public init() {}

    /// Members whose format was not recognised (a single file: the file).
    public var unrecognised: [MemberSummary] {
        members.filter { if case .skipped(let reason) = $0.outcome { reason == MemberSummary.notRecognised } else { false } }
    }

    /// Members refused as damaged or too large.
    public var refused: [MemberSummary] {
        members.filter { if case .refused = $0.outcome { true } else { false } }
    }
}

extension MemberSummary {
    /// The skip reason of a member whose content matches no known format.
    public static let notRecognised = "not a format Vinylogue recognises"
}

/// How far an import has got, for a progress bar.
public struct ImportProgress: Sendable, Hashable {
    /// Bytes read so far (inflated bytes for a ZIP archive), across every member.
    public let bytesRead: Int64
    public let totalBytes: Int64
    public let imported: Int
    public let duplicates: Int
    public let rejected: Int
    /// The member being read, for a ZIP archive or a directory.
    public let member: String?
}

extension ImportSummary {
    /// How many member lines `report` shows of each outcome; the rest are
    /// counted in one line.
    static let membersShown = (read: 20, skipped: 10, refused: 20)
    /// The most characters of an export's own text (a name, a reason, a
    /// note) `report` shows.
    static let longestShown = 160
    /// The most notes `report` shows.
    static let notesShown = 10

    /// What the import did, as `vinylogue import` prints it and Settings
    /// shows an upload's: member by member for an archive, then in all,
    /// with the first 50 rejected lines. Its size is bounded whatever the
    /// export holds (an archive of 20,000 empty members was a 720 KB
    /// summary, shown on Settings at every load): the first members of each
    /// outcome are named, the others counted, and long names are cut.
    /// `printable` makes the export's own bytes (names, lines) safe to show
    /// where they go.
    public func report(for user: Username, printable: (String) -> String) -> String {
        let summary = self
        // Names and lines are the export's own bytes: printed visibly, and cut.
        func shown(_ text: String) -> String {
            let visible = printable(text)
            return visible.count > Self.longestShown ? visible.prefix(Self.longestShown - 1) + "…" : visible
        }
        var out = ""
        if summary.isCollection {
            out += "Read \(grouped(summary.members.count)) \(summary.members.count == 1 ? "file" : "files"):\n"
            var listed: [(MemberSummary, String)] = []
            var left = Self.membersShown
            var hidden = (read: 0, skipped: 0, refused: 0)
            for member in summary.members {
                switch member.outcome {
                case .read: if left.read > 0 { left.read -= 1; listed.append((member, shown(member.name))) } else { hidden.read += 1 }
                case .skipped: if left.skipped > 0 { left.skipped -= 1; listed.append((member, shown(member.name))) } else { hidden.skipped += 1 }
                case .refused: if left.refused > 0 { left.refused -= 1; listed.append((member, shown(member.name))) } else { hidden.refused += 1 }
                }
            }
            let width = min(60, listed.map(\.1.count).max() ?? 0)
            for (member, name) in listed {
                let padded = name.padding(toLength: max(width, name.count), withPad: " ", startingAt: 0)
                switch member.outcome {
                case .read(let format):
                    out += "  \(padded)  \(format.rawValue): \(grouped(member.imported)) imported, "
                        + "\(grouped(member.duplicates)) duplicates, \(grouped(member.rejectedCount)) rejected\n"
                case .skipped(let reason): out += "  \(padded)  skipped: \(shown(reason))\n"
                case .refused(let reason): out += "  \(padded)  refused: \(shown(reason))\n"
                }
            }
            let more = hidden.read + hidden.skipped + hidden.refused
            if more > 0 {
                let counts = [(hidden.read, "read"), (hidden.skipped, "skipped"), (hidden.refused, "refused")]
                    .filter { $0.0 > 0 }.map { "\(grouped($0.0)) \($0.1)" }.joined(separator: ", ")
                out += "  … and \(grouped(more)) more \(more == 1 ? "file" : "files"): \(counts).\n"
            }
            out += "In all: "
        } else {
            out += "Format: \(summary.format?.rawValue ?? "not recognised")\n"
        }
        out += "Imported \(grouped(summary.imported)) scrobbles for \(user); \(grouped(summary.duplicates)) duplicates skipped"
        out += "; \(grouped(summary.rejectedCount)) lines rejected.\n"
        for (reason, count) in summary.skipped.sorted(by: { $0.key < $1.key }).prefix(Self.notesShown) {
            out += "Skipped \(grouped(count)) \(shown(reason)).\n"
        }
        for note in summary.notes.prefix(Self.notesShown) { out += "Note: \(shown(note))\n" }
        if summary.notes.count > Self.notesShown { out += "… and \(grouped(summary.notes.count - Self.notesShown)) more notes.\n" }
        let rejections = summary.rejected.prefix(50)
        for rejection in rejections { out += "  rejected \(shown("\(rejection)"))\n" }
        if summary.rejectedCount > rejections.count { out += "  … and \(grouped(summary.rejectedCount - rejections.count)) more rejected lines.\n" }
        return out
    }
}
