import Foundation
import Testing
import VinylogueCore
import Stores

/// `ListenWrite` states the order of a write of received listens once, for
/// both stores: answered here from memory, its steps come in that order,
/// a person sent twice is stored in two rounds, a token without a holder
/// stores nothing, and each submission hears its own outbox count.
@Suite struct ListenWriteTests {
    static func listen(_ instant: Int64) -> ListenToForward {
        ListenToForward(scrobble: Scrobble(instant: instant, artist: "Artist", album: "Album", track: "Track \(instant)"), duration: nil)
    }

    @Test func aGroupIsWrittenInTheOneOrder() throws {
        let alice = try Username("alice"), bob = try Username("bob")
        let account = ListOwner.account(7)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let forAlice: @Sendable (ListenTokenHolder?) -> ListenSender? = { holder in
            holder.map { ListenSender(user: alice, owner: $0.owner) }
        }
        var write = ListenWrite([
            ListenKeep([Self.listen(1), Self.listen(2)], from: .token(digest: "t1", sender: forAlice), forwardingAmong: [.listenBrainz], at: now),
            ListenKeep([Self.listen(3)], from: .known(ListenSender(user: bob, owner: .household)), forwardingAmong: [], at: now),
            ListenKeep([Self.listen(4)], from: .token(digest: "t2", sender: forAlice), forwardingAmong: [.listenBrainz], at: now),
            ListenKeep([Self.listen(5)], from: .token(digest: "t1", sender: forAlice), forwardingAmong: [.listenBrainz], at: now),
        ])
        var steps: [String] = []
        var stored: [[Int64]] = []
        var answers: [KeptListens?]?
        while answers == nil {
            switch write.next() {
            case .readHolders(let tokens):
                steps.append("holders")
                #expect(tokens == ["t1", "t2"])
                write.heard(holders: ["t1": ListenTokenHolder(owner: account, accountName: alice)])
            case .readChoices(let owners):
                steps.append("choices")
                #expect(owners == [account])
                write.heard(choices: [account: ForwardingChoice(listenBrainzToken: "secret")])
            case .queueJobs(let jobs, let at):
                steps.append("jobs")
                #expect(jobs == [ForwardingJob(owner: account, target: .listenBrainz)] && at == now)
            case .findPeople(let people):
                steps.append("people")
                #expect(people == [alice, bob, alice])
                write.heard(ids: [alice.key: 1, bob.key: 2])
            case .store(let batches):
                steps.append("store")
                stored.append(batches.map(\.userID))
                #expect(batches.allSatisfy { $0.batch.allSatisfy { $0.1 == .received } })
            case .announce(let notices):
                steps.append("announce")
                #expect(notices == [.listensChanged(user: "alice"), .listensChanged(user: "bob")])
            case .enqueue(let entries, _):
                steps.append("enqueue")
                #expect(entries.map(\.listens.count) == [2, 1] && entries.allSatisfy { $0.targets == [.listenBrainz] })
                write.heard(queued: [2, 1])
            case .finished(let kept):
                answers = kept
            }
        }
        #expect(steps == ["holders", "choices", "jobs", "people", "store", "store", "announce", "enqueue"])
        #expect(stored == [[1, 2], [1]])
        #expect(answers == [KeptListens(sender: ListenSender(user: alice, owner: account), queued: 2),
                            KeptListens(sender: ListenSender(user: bob, owner: .household), queued: 0),
                            nil,
                            KeptListens(sender: ListenSender(user: alice, owner: account), queued: 1)])
    }

    @Test func aKnownSenderWhoForwardsNowhereOnlyStores() throws {
        let bob = try Username("bob")
        var write = ListenWrite([ListenKeep([Self.listen(1)], from: .known(ListenSender(user: bob, owner: .household)),
                                            forwardingAmong: [], at: Date(timeIntervalSince1970: 0))])
        var steps: [String] = []
        while true {
            switch write.next() {
            case .findPeople:
                steps.append("people")
                write.heard(ids: [bob.key: 9])
            case .store:
                steps.append("store")
            case .announce:
                steps.append("announce")
            case .readHolders, .readChoices, .queueJobs, .enqueue:
                Issue.record("a step with nothing to do was asked")
                return
            case .finished(let kept):
                #expect(kept == [KeptListens(sender: ListenSender(user: bob, owner: .household), queued: 0)])
                #expect(steps == ["people", "store", "announce"])
                return
            }
        }
    }
}
