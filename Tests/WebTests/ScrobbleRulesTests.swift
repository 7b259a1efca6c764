import Foundation
@testable import HTTPServing
@testable import ListenIngest
import Testing
import VinylogueCore
@testable import Web

/// The pieces of the Last.fm-compatible API that need no server: reading a
/// `track.scrobble` form, the per-credential rate limit, and the seal on
/// sign-in verifiers.
@Suite struct ScrobbleRulesTests {
    static let now = Date(timeIntervalSince1970: 1_688_806_800)
    static let mbid = "C4B8A2E1-1B0B-4B5C-9D0A-2F9F6A1D7E21"

    @Test func aBatchIsReadByIndexInOrderAndCleaned() throws {
        let batch = try LastFMScrobbleBatch(fields: [
            "method": "track.scrobble", "sk": "x",
            "artist[7]": " Later ", "track[7]": "Seven", "timestamp[7]": "1688800700", "mbid[7]": Self.mbid,
            "artist[2]": "Earlier", "track[2]": "Two", "timestamp[2]": "1688800200", "album[2]": "Al\u{0}bum", "mbid[2]": "not-an-id",
        ], now: Self.now)
        #expect(batch.items.map(\.track) == ["Two", "Seven"], "by index, gaps allowed")
        let kept = batch.accepted
        #expect(kept.map(\.artist) == ["Earlier", "Later"], "names trimmed")
        #expect(kept[0].album == "", "an album that cannot be kept is left out, the play is not")
        #expect(kept[0].trackMBID == nil && kept[1].trackMBID == Self.mbid.lowercased())
    }

    @Test func oneScrobbleMayLeaveTheIndicesOut() throws {
        let batch = try LastFMScrobbleBatch(fields: ["artist": "A", "track": "T", "timestamp": "1688800000"], now: Self.now)
        #expect(batch.accepted == [Scrobble(instant: 1_688_800_000, artist: "A", album: "", track: "T")])
    }

    @Test func whatCannotBeReadAsScrobblesIsRefusedWhole() {
        let cases: [([String: String], String)] = [
            ([:], "no scrobbles"),
            (["artist[x]": "A"], "not a scrobble field"),
            (["artist[-1]": "A"], "not a scrobble field"),
            (["artist[50]": "A", "track[50]": "T", "timestamp[50]": "1"], "At most 50"),
            (["artist[0]": "A", "track[0]": "T"], "timestamp[0] is required"),
            (["artist[0]": "A", "track[0]": "T", "timestamp[0]": "1.5"], "whole number"),
        ]
        for (fields, words) in cases {
            #expect(throws: LastFMScrobbleBatch.Problem.self, "\(fields)") { try LastFMScrobbleBatch(fields: fields, now: Self.now) }
            do {
                _ = try LastFMScrobbleBatch(fields: fields, now: Self.now)
            } catch {
                #expect(error.message.contains(words), "\(fields): \(error.message)")
            }
        }
    }

    @Test func theLimitCountsEachCredentialInItsOwnWindow() {
        let time = TestClock(Self.now)
        let clock = time.wallClock
        let limit = ListenRateLimit(clock: clock, limit: 2, window: 10)
        #expect(limit.take("a") == .init(allowed: true, limit: 2, remaining: 1, resetIn: 10, resetAt: 1_688_806_810))
        time.advance(days: 4.0 / 86400)
        #expect(limit.take("a").remaining == 0)
        let refused = limit.take("a")
        #expect(!refused.allowed && refused.resetIn == 6)
        #expect(limit.take("b").allowed, "another credential has its own count")
        time.advance(days: 6.0 / 86400)
        #expect(limit.take("a") == .init(allowed: true, limit: 2, remaining: 1, resetIn: 10, resetAt: 1_688_806_820), "a new window")
        #expect(ListenRateLimit(clock: clock, limit: 0).take("a").allowed, "0 turns it off")
    }

    @Test func aFloodOfMadeUpCredentialsIsForgottenNotScannedForEver() {
        let limit = ListenRateLimit(clock: WallClock { Self.now }, limit: 1, window: 10)
        #expect(limit.take("flooder").allowed)
        #expect(!limit.take("flooder").allowed)
        for n in 0..<10_000 { _ = limit.take("made-up-\(n)") }
        #expect(limit.take("flooder").allowed, "the counts were forgotten once the map filled with live windows")
    }

    @Test func aVerifierOpensOnlyWithItsKeyAndHidesTheHash() throws {
        let seal = MobileVerifierSeal(secret: Data("one secret".utf8))
        let sealed = try #require(seal.verifier(forPassword: "the token"))
        let md5 = MobileSignIn.md5("the token")
        #expect(!sealed.contains(md5) && Data(base64Encoded: sealed).map { !String(decoding: $0, as: UTF8.self).contains(md5) } == true)
        #expect(seal.open(sealed) == md5)
        #expect(MobileVerifierSeal(secret: Data("one secret".utf8)).open(sealed) == md5, "the same secret opens it after a restart")
        #expect(MobileVerifierSeal(secret: Data("another".utf8)).open(sealed) == nil)
        #expect(seal.open("not base64!") == nil)
        #expect(seal.verifier(forPassword: "the token") != sealed, "a fresh nonce each time")
    }
}
