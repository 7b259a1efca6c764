import Stores
import Foundation
import Logging
import ServiceLifecycle
import VinylogueCore
import Workers

/// What the web side needs of forwarding: the services this server
/// forwards to, listens queued in the outbox (`ForwardingOutbox`, whose
/// rows queue their owner's job), the job runner woken, a ListenBrainz
/// token checked, and "now playing" passed on. The sending itself is the
/// job queue's (`Workers.ListenForwarder`).
///
/// A service of the server for "now playing" only: it is passed on in
/// the background, unkept, once to each service the owner forwards to.
public final class ListenForwarding: Service, Sendable {
    package let outbox: any ForwardingOutbox
    /// The services it forwards to.
    public let upstreams: [any ForwardingUpstream]
    private let byTarget: [ForwardingTarget: any ForwardingUpstream]
    package let clock: WallClock
    /// Tells the job runner that forwarding jobs are queued.
    package let wakeup: Wakeup
    package let logger: Logger
    /// "Now playing" to pass on, newest kept when the services are slow.
    private let playing = AsyncStream.makeStream(of: (listen: ListenToForward, owner: ListOwner).self, bufferingPolicy: .bufferingNewest(64))

    public init(outbox: any ForwardingOutbox, upstreams: [any ForwardingUpstream], clock: WallClock, wakeup: Wakeup,
                logger: Logger = Logger(label: "vinylogue.forwarding")) {
        self.outbox = outbox
        self.upstreams = upstreams
        self.byTarget = Dictionary(upstreams.map { ($0.target, $0) }, uniquingKeysWith: { first, _ in first })
        self.clock = clock
        self.wakeup = wakeup
        self.logger = logger
    }

    /// The services this server can forward to.
    public var targets: Set<ForwardingTarget> { Set(byTarget.keys) }

    /// Puts `listens`, received for `owner`, in the outbox for each service
    /// the owner forwards to (their jobs queued with them), and wakes the
    /// job runner. Throws when the outbox
    /// cannot be written: then the player must be told to send them again.
    public func enqueue(_ listens: [ListenToForward], of owner: ListOwner) async throws {
        let targets = try await outbox.choice(of: owner).targets.intersection(byTarget.keys)
        guard !targets.isEmpty, !listens.isEmpty else { return }
        if try await outbox.enqueue(listens, of: owner, to: targets, at: clock.now) > 0 { wakeup.signal() }
    }

    /// Whose ListenBrainz `token` is, asked of ListenBrainz before it is kept.
    public func checkListenBrainzToken(_ token: String) async -> Result<String, SourceError> {
        guard let upstream = byTarget[.listenBrainz] as? any TokenCheckingUpstream else {
            return .failure(.notFound(what: "Forwarding to ListenBrainz"))
        }
        do {
            return .success(try await upstream.owner(ofToken: token))
        } catch {
            return .failure(error)
        }
    }

    /// Wakes the job runner (after listens or failed ones are put in line).
    public func wake() { wakeup.signal() }

    /// Passes on that `owner` plays `listen` now to each service they
    /// forward to, in the background: the player does not wait for the
    /// services, and nothing is kept (a "now playing" that fails is over by
    /// the time it could be sent again; the failure is logged).
    public func playingNow(_ listen: ListenToForward, of owner: ListOwner) {
        playing.continuation.yield((listen, owner))
    }

    /// Passes on "now playing" until the server stops.
    public func run() async throws {
        await withGracefulShutdownHandler {
            for await (listen, owner) in self.playing.stream { await self.sendPlayingNow(listen, of: owner) }
        } onGracefulShutdown: {
            self.playing.continuation.finish()
        }
    }

    /// Tells each service `owner` forwards to that they play `listen` now.
    package func sendPlayingNow(_ listen: ListenToForward, of owner: ListOwner) async {
        let choice: ForwardingChoice
        do {
            choice = try await outbox.choice(of: owner)
        } catch {
            logger.info("a now playing was not passed on: the forwarding choices could not be read (\(error))")
            return
        }
        for target in choice.targets.intersection(byTarget.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
            do {
                try await byTarget[target]?.playingNow(listen, as: choice)
            } catch {
                logger.info("a now playing was not passed on to \(target.rawValue): \(error.message)")
            }
        }
    }
}
