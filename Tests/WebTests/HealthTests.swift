import Foundation
import HummingbirdTesting
import PostgresNIO
import PostgresStore
import Testing
import Web

/// `/healthz` says which database the instance uses and whether it answers,
/// so a load balancer can route around an instance that lost it.
@Suite struct HealthTests {
    @Test func healthSaysWhenPostgreSQLIsGoneAndWhenItIsBack() async throws {
        // The database's patience as in production: this test waits it out.
        let patience = Patience(nameLookup: .seconds(10), albumColours: .seconds(10), lastFM: .seconds(10), database: .seconds(2))
        try await Harness.run(postgres: true, patience: patience) { harness, client in
            // Nothing looked for a kept page yet.
            #expect(try await client.getOnce("/healthz").body
                    == #"{"database":"postgresql","renderedPages":{"hits":0,"misses":0},"status":"ok"}"#)
            let url = try #require(harness.databaseURL)
            let name = try #require(URLComponents(string: url)?.path.split(separator: "/").last.map(String.init))
            var admin = try #require(URLComponents(string: url))
            admin.path = "/postgres"
            let adminURL = try #require(admin.string)
            // The database stops taking connections and drops the app's.
            try await PostgresDatabase.with(url: adminURL, maximumConnections: 1) { server in
                try await server.client.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS false"))
                try await server.client.query(PostgresQuery(unsafeSQL:
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)'"))
            }
            let gone = try await client.getOnce("/healthz")
            #expect(gone.status == .serviceUnavailable)
            #expect(gone.body.hasPrefix(#"{"database":"postgresql","#) && gone.body.hasSuffix(#""status":"unavailable"}"#))
            try await PostgresDatabase.with(url: adminURL, maximumConnections: 1) { server in
                try await server.client.query(PostgresQuery(unsafeSQL: "ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS true"))
            }
            // The pool reconnects on its own, after a backoff that a loaded
            // machine stretches: asked until it says so (each answer waits
            // for the database at most its 2 s of patience).
            var back = try await client.getOnce("/healthz")
            for _ in 0..<30 where back.status != .ok { back = try await client.getOnce("/healthz") }
            #expect(back.status == .ok)
        }
    }
}

/// `/metrics`: what an operator watches, in Prometheus's text format.
@Suite struct MetricsTests {
    @Test func requestsTheBudgetCopiesAndTheOutboxAreFigures() async throws {
        try await Harness.run(demo: true) { _, client in
            _ = try await client.get("/u/demo")
            _ = try await client.get("/u/demo")
            _ = try await client.getOnce("/u/demo/week/not-a-date")
            let metrics = try await client.getOnce("/metrics")
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let body = metrics.body
            // By the route's pattern, never the name asked for.
            #expect(body.contains(#"vinylogue_http_requests_total{route="/u/{user}",method="GET"} 2"#), "\(body)")
            #expect(body.contains(#"vinylogue_http_requests_total{route="/u/{user}/week/{day}",method="GET"} 1"#))
            #expect(body.contains("vinylogue_http_request_duration_seconds_bucket"))
            #expect(body.contains(#"vinylogue_lastfm_requests{for="views"}"#) && body.contains(#"vinylogue_lastfm_requests{for="copies"} 0"#))
            for state in ["queued", "copying", "done", "failed", "stopped"] {
                #expect(body.contains(#"vinylogue_history_copies{state="\#(state)"} 0"#), "\(state)")
            }
            #expect(body.contains("vinylogue_outbox_lag_seconds 0"))
            #expect(body.contains("vinylogue_uploads_waiting 0"))
            for state in ["queued", "running", "done", "failed"] {
                #expect(body.contains(#"vinylogue_jobs{kind="upload",state="\#(state)"} 0"#), "\(state)")
                #expect(body.contains(#"vinylogue_jobs{kind="forwarding",state="\#(state)"} 0"#), "\(state)")
            }
            #expect(!body.contains("/u/demo"))
        }
    }
}
