import Foundation
import VinylogueCore

/// One step of a long migration (counting the weekly charts of a whole
/// archive), as far as it has come.
public struct MigrationStep: Sendable, Hashable {
    /// What it is doing, as a sentence fragment ("Counting the weekly charts").
    public let name: String
    public let done: Int
    public let total: Int

    public init(name: String, done: Int, total: Int) {
        self.name = name
        self.done = done
        self.total = total
    }

    /// "Counting the weekly charts: 45% (450,000 of 1,000,000 scrobbles),
    /// once after an update."
    public var sentence: String {
        let percent = total > 0 ? done * 100 / total : 100
        let format = IntegerFormatStyle<Int>().grouping(.automatic).locale(Locale(identifier: "en_US"))
        return "\(name): \(percent)% (\(done.formatted(format)) of \(total.formatted(format)) scrobbles), once after an update."
    }

    /// Writes each step's sentence as a line on standard error: for the
    /// person at the terminal and the server's log alike.
    public static let toStandardError: MigrationProgress = { step in
        FileHandle.standardError.write(Data((step.sentence + "\n").utf8))
    }
}

/// Told how far a long migration is: at its start, at each further
/// percent, and at its end.
public typealias MigrationProgress = @Sendable (MigrationStep) -> Void

/// Calls a `MigrationProgress` at most once per percent of `total`.
public struct MigrationCounter {
    public let name: String
    public let total: Int
    let report: MigrationProgress
    private var reportedPercent = -1

    public init(name: String, total: Int, report: @escaping MigrationProgress) {
        self.name = name
        self.total = total
        self.report = report
    }

    public mutating func advance(to done: Int) {
        // Nothing to count is nothing to report.
        guard total > 0 else { return }
        let percent = min(100, done * 100 / total)
        guard percent > reportedPercent else { return }
        reportedPercent = percent
        report(MigrationStep(name: name, done: min(done, total), total: total))
    }
}
