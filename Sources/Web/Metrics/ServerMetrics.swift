import Foundation
import Hummingbird
import Imports
import LastFM
import Metrics
import Prometheus
import Stores
import Sync
import Synchronization
import VinylogueCore
import Workers

/// What an operator can watch, served at `/metrics` in Prometheus's text
/// format: requests and their latency by route, the Last.fm budget spent
/// by page views and by history copies, the copies queued, running,
/// failed and done, uploads waiting, and how far the forwarding outbox
/// lags. Built on swift-metrics' types with a factory of its own (no
/// process-wide bootstrap), emitted by swift-prometheus.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// Each route's counters and timer, made once.
    private let routes = Mutex<[RouteKey: RouteMetrics]>([:])

    /// A route pattern and a method: hashed as they are, with no string made per request.
    struct RouteKey: Hashable, Sendable {
        let route: String
        let method: String
    }

    /// What the figures read at each scrape.
    struct Sources: Sendable {
        let permits: PrioritisedPermits
        let copies: any HistoryCopyStore
        let outbox: (any ForwardingOutbox)?
        let uploads: UploadedImports?
        /// The one job queue and the kinds this instance runs.
        let jobs: JobRunner?
        let clock: WallClock
    }

    let sources: Sources

    init(sources: Sources) {
        self.sources = sources
        factory = PrometheusMetricsFactory(registry: registry)
    }

    final class RouteMetrics: Sendable {
        let requests: Metrics.Counter
        let failures: Metrics.Counter
        let latency: Metrics.Timer

        init(route: String, method: String, factory: PrometheusMetricsFactory) {
            let dimensions = [("route", route), ("method", method)]
            requests = Metrics.Counter(label: "vinylogue_http_requests_total", dimensions: dimensions, factory: factory)
            failures = Metrics.Counter(label: "vinylogue_http_server_errors_total", dimensions: dimensions, factory: factory)
            latency = Metrics.Timer(label: "vinylogue_http_request_duration_seconds", dimensions: dimensions, factory: factory)
        }
    }

    /// Records one request to `route`.
    func record(route: String, method: String, status: Int, duration: Duration) {
        let key = RouteKey(route: route, method: method)
        let metrics = routes.withLock { routes in
            if let known = routes[key] { return known }
            let made = RouteMetrics(route: route, method: method, factory: factory)
            routes[key] = made
            return made
        }
        metrics.requests.increment()
        if status >= 500 { metrics.failures.increment() }
        metrics.latency.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// The figures as Prometheus reads them, with the gauges read now.
    func scrape() async -> String {
        let used = sources.permits.used
        registry.makeGauge(name: "vinylogue_lastfm_requests", labels: [("for", "views")],
                           help: "Requests made to Last.fm since start, by what they were for").set(Double(used.views))
        registry.makeGauge(name: "vinylogue_lastfm_requests", labels: [("for", "copies")],
                           help: "Requests made to Last.fm since start, by what they were for").set(Double(used.background))
        registry.makeGauge(name: "vinylogue_lastfm_copy_requests_waiting",
                           help: "History copies' requests waiting for the Last.fm budget").set(Double(sources.permits.backgroundWaiting))
        if let counts = try? await sources.copies.counts() {
            for state in HistoryCopy.State.allCases {
                registry.makeGauge(name: "vinylogue_history_copies", labels: [("state", state.rawValue)],
                                   help: "History copies by state").set(Double(counts[state] ?? 0))
            }
        }
        if let outbox = sources.outbox {
            let due = (try? await outbox.nextDue()) ?? nil
            let lag = due.map { max(0, sources.clock.now.timeIntervalSince($0)) } ?? 0
            registry.makeGauge(name: "vinylogue_outbox_lag_seconds",
                               help: "How long the oldest listen due for forwarding has waited past its time").set(lag)
        }
        if let uploads = sources.uploads, let jobs = try? await uploads.jobs.waiting(on: uploads.machine) {
            registry.makeGauge(name: "vinylogue_uploads_waiting", help: "Uploaded exports waiting to be imported on this instance")
                .set(Double(jobs))
        }
        if let jobs = sources.jobs {
            for kind in jobs.kinds.sorted() {
                guard let counts = try? await jobs.queue.counts(of: kind) else { continue }
                for state in DurableJob.State.allCases {
                    registry.makeGauge(name: "vinylogue_jobs", labels: [("kind", kind.rawValue), ("state", state.rawValue)],
                                       help: "Jobs of the queue by kind and state (every instance's)").set(Double(counts[state] ?? 0))
                }
            }
        }
        return registry.emitToString()
    }
}

/// Counts each request and its latency by the route it matched (the
/// route's pattern, never the raw path, so names do not become labels).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.record(route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code,
                           duration: .now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.record(route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status, duration: .now - start)
            throw error
        }
    }
}
