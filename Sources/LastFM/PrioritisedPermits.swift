import Synchronization

/// Who a request to Last.fm is for: a person waiting for a page, or work
/// in the background (history copies), which uses what pages leave.
public enum LastFMRequestPriority: Sendable {
    case view
    case background

    /// The priority of the current task's requests (views unless set).
    @TaskLocal public static var current: LastFMRequestPriority = .view
}

/// One budget of Last.fm requests (`LastFMRequestPermits`: this process's
/// `RateLimit`, or a fleet's shared permits) shared fairly: page views
/// come first, and background work (history copies) uses what they leave.
///
/// - A view takes its permit as soon as the budget has one.
/// - Background requests take permits one at a time, in the order they
///   asked, so copies running side by side take turns page by page
///   (round-robin: a 300,000-scrobble history cannot starve a newcomer's
///   2,000), and only a permit free at that moment.
/// - While views are waiting, background requests take none, so a view
///   waits at most for the next permit the budget gets back; while views
///   came in the last `viewsLately` (1 s: the rest of a page's requests),
///   they leave one permit free, so the page's next request finds one at
///   once. Without views, copies use the whole budget.
///
/// It counts what each side has used, for the operator's figures.
public final class PrioritisedPermits: LastFMRequestPermits {
    let budget: any LastFMRequestPermits
    /// How long after a view copies keep one permit spare.
    let viewsLately: Duration
    private let state = Mutex(State())

    private struct State {
        var viewsWaiting = 0
        var lastView: ContinuousClock.Instant?
        /// Background requests waiting for their turn, first come first.
        var queue: [(id: Int, turn: CheckedContinuation<Void, Never>)] = []
        /// The background request whose turn it is.
        var turnHolder: Int?
        var nextID = 0
        var usedByViews = 0
        var usedByBackground = 0
    }

    public init(_ budget: any LastFMRequestPermits, viewsLately: Duration = .seconds(1)) {
        self.budget = budget
        self.viewsLately = viewsLately
    }

    /// Requests made so far for views and for background work.
    public var used: (views: Int, background: Int) { state.withLock { ($0.usedByViews, $0.usedByBackground) } }

    /// Background requests waiting for a permit now.
    public var backgroundWaiting: Int { state.withLock { $0.queue.count + ($0.turnHolder == nil ? 0 : 1) } }

    public func acquire() async throws -> Int {
        if LastFMRequestPriority.current == .background { return try await acquireForBackground() }
        state.withLock {
            $0.viewsWaiting += 1
            $0.lastView = .now
        }
        defer { state.withLock { $0.viewsWaiting -= 1 } }
        let permit = try await budget.acquire()
        state.withLock {
            $0.usedByViews += 1
            $0.lastView = .now
        }
        return permit
    }

    public func acquireIfFree(leaving spare: Int) async throws -> (permit: Int?, retryAfter: Duration) {
        try await budget.acquireIfFree(leaving: spare)
    }

    public func release(_ permit: Int) async { await budget.release(permit) }

    /// Waits for this request's turn among background requests, then for a
    /// permit that views leave.
    func acquireForBackground() async throws -> Int {
        try await waitForTurn()
        defer { passTurn() }
        while true {
            try Task.checkCancellation()
            let (viewsWaiting, viewedLately) = state.withLock { s in
                (s.viewsWaiting, s.lastView.map { ContinuousClock.now - $0 < viewsLately } ?? false)
            }
            if viewsWaiting == 0 {
                let (permit, retryAfter) = try await budget.acquireIfFree(leaving: viewedLately ? 1 : 0)
                if let permit {
                    state.withLock { $0.usedByBackground += 1 }
                    return permit
                }
                try await Task.sleep(for: min(max(retryAfter, .milliseconds(5)), .milliseconds(250)))
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Returns when this request holds the background requests' one turn;
    /// first come, first served. A request cancelled while in line leaves it.
    private func waitForTurn() async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    guard s.turnHolder != nil else {
                        s.turnHolder = id
                        return true
                    }
                    s.queue.append((id, turn))
                    return false
                }
                if now { turn.resume() }
            }
        } onCancel: {
            let left = state.withLock { s -> CheckedContinuation<Void, Never>? in
                guard let index = s.queue.firstIndex(where: { $0.id == id }) else { return nil }
                return s.queue.remove(at: index).turn
            }
            left?.resume()
        }
        let holds = state.withLock { $0.turnHolder == id }
        guard !Task.isCancelled else {
            if holds { passTurn() }
            throw CancellationError()
        }
    }

    /// Hands the turn to the next in line.
    private func passTurn() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.queue.isEmpty else {
                s.turnHolder = nil
                return nil
            }
            let next = s.queue.removeFirst()
            s.turnHolder = next.id
            return next.turn
        }
        next?.resume()
    }
}
