import Foundation
import Testing
import VinylogueCore
@testable import Stores

/// Each owner's music server (`MusicServerSettings`), on both stores: kept
/// with its password, replaced, per owner, forgotten.
@Suite struct MusicServerContractTests {
    typealias Backend = StoreContractTests.Backend
    static let at = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: Backend.allCases)
    func aServerIsKeptPerOwnerReplacedAndForgotten(_ backend: Backend) async throws {
        try await StoreContractTests.withStores(backend) { stores in
            let servers = stores.musicServers
            let (ana, _) = try await stores.accounts.signedIn(try Username("ana"), lastFMSessionKey: "sk-ana", at: Self.at)
            #expect(try await servers.musicServer(of: ana.owner) == nil)
            let nas = MusicServerSetting(kind: .subsonic, address: "http://nas.local:4533", username: "ana", password: "pass word")
            try await servers.setMusicServer(nas, of: ana.owner, at: Self.at)
            try await servers.setMusicServer(MusicServerSetting(kind: .mpd, address: "living-room:6600", username: nil, password: nil),
                                             of: .household, at: Self.at)
            #expect(try await servers.musicServer(of: ana.owner) == nas)
            #expect(try await servers.musicServer(of: .household)?.kind == .mpd)
            #expect(try await servers.musicServer(of: .household)?.password == nil)
            // Replaced whole.
            let mpd = MusicServerSetting(kind: .mpd, address: "nas.local:6600", username: nil, password: "mpd secret")
            try await servers.setMusicServer(mpd, of: ana.owner, at: Self.at.addingTimeInterval(60))
            #expect(try await servers.musicServer(of: ana.owner) == mpd)
            try await servers.forgetMusicServer(of: ana.owner)
            #expect(try await servers.musicServer(of: ana.owner) == nil)
            #expect(try await servers.musicServer(of: .household) != nil)
        }
    }
}
