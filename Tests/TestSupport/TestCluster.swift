import Foundation
import Testing

/// The PostgreSQL server the tests that need one use: `scripts/test`
/// starts a cluster and names it in `VINYLOGUE_TEST_DATABASE_URL`.
public enum TestCluster {
    /// The cluster's address. Without one, the test is cancelled with a
    /// sentence saying how to run it, except in CI (`CI` set), where
    /// `scripts/test` always starts one and its absence is a failure.
    public static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["VINYLOGUE_TEST_DATABASE_URL"], !url.isEmpty { return url }
        let sentence = "No PostgreSQL for this test: set VINYLOGUE_TEST_DATABASE_URL, or run the tests with scripts/test, which starts a cluster"
        if let ci = environment["CI"], !ci.isEmpty, ci != "false" {
            Issue.record(Comment(rawValue: sentence), sourceLocation: sourceLocation)
            throw Missing()
        }
        try Test.cancel(Comment(rawValue: sentence), sourceLocation: sourceLocation)
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "VINYLOGUE_TEST_DATABASE_URL is not set" }
    }

    /// Runs one of PostgreSQL's client programs (`pg_dump`, `pg_restore`),
    /// the cluster's own version when it is there (Debian keeps them in
    /// /usr/lib/postgresql/N/bin), and returns its standard error; a
    /// failure throws with what it said.
    public static func run(_ program: String, _ arguments: [String]) async throws -> String {
        let fm = FileManager.default
        let versions = ((try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        let candidates = versions.reversed().map { "/usr/lib/postgresql/\($0)/bin/\(program)" } + ["/usr/bin/\(program)"]
        guard let path = candidates.first(where: fm.isExecutableFile(atPath:)) else { throw ToolMissing(program: program) }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard status == 0 else { throw ToolFailed(program: program, status: status, said: said) }
        return said
    }

    struct ToolMissing: Error, CustomStringConvertible {
        let program: String
        var description: String { "\(program) is missing: install Debian's postgresql-client" }
    }

    struct ToolFailed: Error, CustomStringConvertible {
        let program: String, status: Int32, said: String
        var description: String { "\(program) exited \(status): \(said)" }
    }
}
