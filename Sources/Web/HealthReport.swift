import Foundation
import Hummingbird

/// The body of `/healthz`: `{"database":"postgresql","renderedPages":{…},"status":"ok"}`,
/// or status "unavailable" with HTTP 503 when the database does not answer
/// within its patience (2 seconds unless configured), so a load balancer
/// stops sending people to an instance that cannot serve them.
/// `renderedPages` counts this instance's kept-page hits and misses since
/// start (`scripts/bench-web` prints them beside its figures).
struct HealthReport: Encodable {
    let status: String
    let database: String
    let renderedPages: RenderedPages.Counts

    static func response(_ database: DatabaseHealth, rendered: RenderedPages, patience: Duration) async throws -> Response {
        let checking = Task { await database.check() }
        let healthy = await checking.value(within: patience) ?? false
        let report = HealthReport(status: healthy ? "ok" : "unavailable", database: database.kind, renderedPages: rendered.counts)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var response = APIResponse.json(try encoder.encode(report))
        if !healthy { response.status = .serviceUnavailable }
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// Which database keeps the app's personal data, and whether it answers.
struct DatabaseHealth: Sendable {
    /// "sqlite" or "postgresql".
    let kind: String
    /// Whether a trivial query succeeds now (bounded by the caller).
    let check: @Sendable () async -> Bool

    init(kind: String, check: @escaping @Sendable () async -> Bool) {
        self.kind = kind
        self.check = check
    }
}
