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
    /// What the import did, as `vinylogue import` prints it and Settings
    /// shows an upload's: member by member for an archive, then in all,
    /// with the first 50 rejected lines. `printable` makes the export's
    /// own bytes (names, lines) safe to show where they go.
    public func report(for user: Username, printable: (String) -> String) -> String {
        let summary = self
        var out = ""
        if summary.isCollection {
            out += "Read \(summary.members.count) \(summary.members.count == 1 ? "file" : "files"):\n"
            // Names and lines are the export's own bytes: printed visibly.
            let names = summary.members.map { printable($0.name) }
            let width = min(60, names.map(\.count).max() ?? 0)
            for (member, shown) in zip(summary.members, names) {
                let name = shown.padding(toLength: max(width, shown.count), withPad: " ", startingAt: 0)
                switch member.outcome {
                case .read(let format):
                    out += "  \(name)  \(format.rawValue): \(grouped(member.imported)) imported, "
                        + "\(grouped(member.duplicates)) duplicates, \(grouped(member.rejectedCount)) rejected\n"
                case .skipped(let reason): out += "  \(name)  skipped: \(printable(reason))\n"
                case .refused(let reason): out += "  \(name)  refused: \(printable(reason))\n"
                }
            }
            out += "In all: "
        } else {
            out += "Format: \(summary.format?.rawValue ?? "not recognised")\n"
        }
        out += "Imported \(grouped(summary.imported)) scrobbles for \(user); \(grouped(summary.duplicates)) duplicates skipped"
        out += "; \(grouped(summary.rejectedCount)) lines rejected.\n"
        for (reason, count) in summary.skipped.sorted(by: { $0.key < $1.key }) {
            out += "Skipped \(grouped(count)) \(reason).\n"
        }
        for note in summary.notes { out += "Note: \(printable(note))\n" }
        let shown = summary.rejected.prefix(50)
        for rejection in shown { out += "  rejected \(printable("\(rejection)"))\n" }
        if summary.rejectedCount > shown.count { out += "  … and \(grouped(summary.rejectedCount - shown.count)) more rejected lines.\n" }
        return out
    }
}
