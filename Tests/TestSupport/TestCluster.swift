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
}
