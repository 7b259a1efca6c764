import AsyncHTTPClient
import Foundation
import ListenBrainz
import ListenBrainzTestServer
import Testing
import VinylogueCore

@Suite struct SubmitTests {
    static let listens = [
        Scrobble(instant: 1_590_900_000, artist: "Phoebe Bridgers", album: "Punisher", track: "Kyoto",
                 artistMBID: "0ff7d0d0-2cc3-4ce0-8ac4-f9c5ab8e8826", albumMBID: "c5b4a6f9-0b2a-4a5b-9b7d-2b7f8f0a1c11"),
        Scrobble(instant: 1_590_900_240, artist: "Phoebe Bridgers", album: "Punisher", track: "Garden Song"),
        Scrobble(instant: 1_590_900_500, artist: "Fiona Apple", album: "", track: "Shameika"),
    ]

    /// What the client puts on the wire: every listen of every submission
    /// it was given, with its fields in ListenBrainz's names (an empty
    /// album sent as no release at all), and validate-token's answer read.
    @Test func submittedListensAreSentWithTheirFields() async throws {
        try await withFakeListenBrainz { client, fake, _ in
            #expect(await client.submit(Self.listens, token: "test-token") == .accepted)
            #expect(await client.submit([Self.listens[0]], token: "test-token") == .accepted)
            let received = await fake.received()
            #expect(received.submissions == 2)
            // Four listens went out: the client does not drop a repeat (the
            // server decides what a repeat is).
            #expect(received.listensReceived == 4)
            #expect(received.listens.map(\.user) == ["rob", "rob", "rob"])
            let sent = received.listens.map(\.listen)
            #expect(sent[0] == .init(listenedAt: 1_590_900_000, artist: "Phoebe Bridgers", track: "Kyoto", release: "Punisher",
                                     releaseMBID: "c5b4a6f9-0b2a-4a5b-9b7d-2b7f8f0a1c11",
                                     artistMBIDs: ["0ff7d0d0-2cc3-4ce0-8ac4-f9c5ab8e8826"]))
            #expect(sent[1] == .init(listenedAt: 1_590_900_240, artist: "Phoebe Bridgers", track: "Garden Song", release: "Punisher"))
            #expect(sent[2] == .init(listenedAt: 1_590_900_500, artist: "Fiona Apple", track: "Shameika"))
            let holder = try await client.validate(token: "test-token")
            let nobody = try await client.validate(token: "nope")
            #expect(holder == "rob" && nobody == nil)
        }
    }

    @Test func failuresAreTemporaryOrPermanent() async throws {
        let waits = RecordedWaits()
        try await withFakeListenBrainz(pacing: waits.pacing) { client, fake, _ in
            #expect(await client.submit(Self.listens, token: "wrong") == .permanentFailure(.invalidToken))

            await fake.inject(.init(.rateLimited(resetIn: 5), endpoint: "submit-listens", times: 1))
            #expect(await client.submit(Self.listens, token: "test-token")
                    == .temporaryFailure(.rateLimited(retryAfter: 5), retryAfter: .seconds(5)))

            await fake.inject(.init(.httpStatus(500), endpoint: "submit-listens", times: 1))
            guard case .temporaryFailure(.unavailable(500), _) = await client.submit(Self.listens, token: "test-token") else {
                Issue.record("a 500 is a temporary failure"); return
            }

            let empty = Scrobble(instant: 1_590_900_000, artist: "", album: "", track: "x")
            guard case .permanentFailure(.refused(400, let reason)) = await client.submit([empty], token: "test-token") else {
                Issue.record("a refused payload is permanent"); return
            }
            #expect(reason.contains("artist_name"))
            #expect(await client.submit(Array(repeating: Self.listens[0], count: 1001), token: "test-token")
                    == .permanentFailure(.refused(status: 400, reason: "more than 1000 listens in one submission")))
            #expect(await fake.received().submissions == 0)
        }
    }

    @Test func aHeldSubmissionTimesOutAsATemporaryFailure() async throws {
        try await withFakeListenBrainz { client, fake, root in
            await fake.inject(.init(.held, endpoint: "submit-listens", times: 1))
            // An impatient client for the held answer (which never comes in
            // time, however loaded the machine); the patient one after.
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            let impatient = ListenBrainzClient(configuration: .init(apiRoot: root, timeout: .milliseconds(300)), http: http)
            #expect(await impatient.submit(Self.listens, token: "test-token") == .temporaryFailure(.timeout, retryAfter: nil))
            try await http.shutdown()
            await fake.untilHolding(1)
            await fake.releaseHeld()
            // The held one was recorded anyway (ListenBrainz may have
            // stored what it never answered): sending again only repeats it.
            let again = await client.submit(Self.listens, token: "test-token")
            #expect(again == .accepted)
            let received = await fake.received()
            #expect(received.listens.count == 3)
        }
    }
}
