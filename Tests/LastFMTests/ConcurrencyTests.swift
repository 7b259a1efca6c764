import Foundation
import LastFM
import LastFMTestServer
import Testing
import VinylogueCore

@Suite struct ConcurrencyTests {
    /// 50 concurrent chart requests for 12 distinct weeks: the upstream sees
    /// one request per distinct week, never two identical ones at once, and
    /// never more than 5 in any one-second window.
    @Test func rateLimitAndCoalescingUnderFiftyConcurrentRequests() async throws {
        try await withFakeLastFM(requestsPerSecond: 5) { fake, client in
            let rj = try Username("rj")
            let list = try await client.chartList(for: rj)
            await fake.clearLog()
            // Every request is slow, so identical ones overlap in flight.
            await fake.inject(.init(.delay(milliseconds: 300)))
            let weeks = Array(list.weeks.suffix(12))
            let charts = try await withThrowingTaskGroup(of: WeeklyChart.self) { group in
                for i in 0..<50 {
                    group.addTask { try await client.chart(for: rj, kind: .album, week: weeks[i % weeks.count]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(charts.count == 50)
            let log = await fake.requests()
            let times = log.map(\.received).sorted()
            // Coalescing: each distinct request reached the upstream once.
            #expect(log.count == weeks.count)
            // No two identical requests were in flight at the same time.
            let byKey = Dictionary(grouping: log) { $0.parameters["from"] ?? "" }
            for (_, same) in byKey where same.count > 1 {
                let spans = same.map { ($0.received, $0.answered ?? .infinity) }.sorted { $0.0 < $1.0 }
                for (a, b) in zip(spans, spans.dropFirst()) { #expect(a.1 <= b.0) }
            }
            // The rate limit: at most 5 arrivals in any one-second window.
            for (i, start) in times.enumerated() {
                let inWindow = times[i...].prefix { $0 < start + 1.0 }.count
                #expect(inWindow <= 5, "\(inWindow) requests within a second from t=\(start)")
            }
            // And the limiter did not just serialise everything: 12 requests at 5/s take about 2 s.
            #expect(times.last! - times.first! >= 2.0)
        }
    }
}
