import Foundation
import Synchronization
import Testing
import VinylogueCore
import Stores

/// The one stream of changes to what people's pages show: followers forget
/// at once and tidy after, and a change made here reaches the fleet unless
/// its write told it already.
@Suite struct ListeningChangesTests {
    final class Follower: ListeningFollower {
        let seen = Mutex<[String]>([])
        func forget(_ change: ListeningChange) { seen.withLock { $0.append("forget \(change)") } }
        func tidy(after change: ListeningChange) async { seen.withLock { $0.append("tidy \(change)") } }
    }

    final class Fleet: FleetNotices {
        let announced = Mutex<[FleetNotice]>([])
        func announce(_ notice: FleetNotice) async { announced.withLock { $0.append(notice) } }
        func follow(_ heard: @escaping @Sendable (FleetNotice) -> Void) async {}
    }

    @Test func changesReachEveryFollowerAndTheFleet() async throws {
        let fleet = Fleet(), changes = ListeningChanges(notices: fleet)
        let first = Follower(), second = Follower()
        changes.follow(first)
        changes.follow(second)
        let rj = try Username("RJ")
        await changes.changed(.listens(rj))
        await changes.changed(.listens(rj), fleetTold: true)
        await changes.changed(.erased(rj))
        #expect(fleet.announced.withLock { $0 } == [.listensChanged(user: "RJ"), .erased(user: "RJ")])
        let expected = ["forget \(ListeningChange.listens(rj))", "tidy \(ListeningChange.listens(rj))",
                        "forget \(ListeningChange.listens(rj))", "tidy \(ListeningChange.listens(rj))",
                        "forget \(ListeningChange.erased(rj))", "tidy \(ListeningChange.erased(rj))"]
        #expect(first.seen.withLock { $0 } == expected && second.seen.withLock { $0 } == expected)
    }

    @Test func noticesHeardAreForgottenAtOnceAndNeverAnnouncedAgain() async throws {
        let fleet = Fleet(), changes = ListeningChanges(notices: fleet), follower = Follower()
        changes.follow(follower)
        #expect(changes.heard(.playingNow(user: "rj", artist: "A", track: "T", album: "", until: 0)) == nil)
        #expect(changes.heard(.listensChanged(user: "not a name!")) == nil)
        #expect(changes.heard(.listeningAgain) == .anything)
        let erased = changes.heard(.erased(user: "Vera"))
        #expect(erased == .erased(try Username("Vera")))
        #expect(follower.seen.withLock { $0 } == ["forget \(ListeningChange.anything)", "forget \(erased!)"])
        await changes.tidy(after: erased!)
        #expect(follower.seen.withLock { $0 }.last == "tidy \(erased!)")
        #expect(fleet.announced.withLock { $0 }.isEmpty)
    }
}
