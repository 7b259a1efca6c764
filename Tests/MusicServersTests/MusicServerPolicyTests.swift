import Testing
@testable import MusicServers

/// A hosted Vinylogue reaches public music servers only, unless its
/// operator lists a host: names resolve (here from a table), and every
/// address a name has must be public.
@Suite struct MusicServerPolicyTests {
    static let names: [String: [String]] = [
        "music.example.org": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
        "nas.lan": ["192.168.1.20"],
        "sneaky.example.net": ["93.184.216.35", "127.0.0.1"],
        "metadata.example": ["169.254.169.254"],
    ]

    static func policy(_ allowed: [String] = []) -> MusicServerPolicy {
        MusicServerPolicy(allowed: allowed) { names[$0] ?? [] }
    }

    @Test func publicServersAreReachedAndTheMachinesOwnNetworkIsNot() async {
        #expect(await Self.policy().refusal(of: "music.example.org") == nil)
        #expect(await Self.policy().refusal(of: "MUSIC.example.org") == nil)
        for host in ["nas.lan", "sneaky.example.net", "metadata.example", "127.0.0.1", "localhost", "[::1]", "10.0.0.5", "172.20.1.1",
                     "100.100.1.1", "0.0.0.0", "::ffff:192.168.1.1", "fe80::1", "fd00::1", "224.0.0.1", "nowhere.invalid"] {
            #expect(await Self.policy().refusal(of: host) != nil, "\(host)")
        }
        #expect(await Self.policy().refusal(of: "nas.lan")?.contains("VINYLOGUE_MUSIC_SERVERS") == true)
        #expect(await Self.policy().refusal(of: "nowhere.invalid") == "Vinylogue could not find nowhere.invalid. Check the address.")
    }

    @Test func theOperatorsListLetsAHouseholdsServerIn() async {
        let household = Self.policy(["nas.lan", "*.home.arpa", "192.168.1.*", " 10.0.0.5 "])
        #expect(await household.refusal(of: "nas.lan") == nil)
        #expect(await household.refusal(of: "jukebox.home.arpa") == nil)
        #expect(await household.refusal(of: "192.168.1.77") == nil)
        #expect(await household.refusal(of: "10.0.0.5") == nil)
        #expect(await household.refusal(of: "192.168.2.1") != nil)
        #expect(await household.refusal(of: "home.arpa.evil.example") != nil)
        #expect(MusicServerPolicy(environmentValue: "nas.lan, *.lan,").allowed == ["nas.lan", "*.lan"])
    }
}
