import Foundation
import Testing
import VinylogueCore

@Suite struct UsernameTests {
    @Test(arguments: ["ybsc", "RJ", "a1", "Some_User-99", "abcdefghijklmno", "  padded  "])
    func acceptsValidNames(_ raw: String) throws {
        let name = try Username(raw)
        #expect(name.value == raw.trimmingWhitespace())
    }

    @Test func rejectsInvalidNames() {
        #expect(throws: Username.Invalid.empty) { try Username("   ") }
        #expect(throws: Username.Invalid.tooShort) { try Username("a") }
        #expect(throws: Username.Invalid.tooLong) { try Username("abcdefghijklmnop") }
        #expect(throws: Username.Invalid.mustStartWithLetter) { try Username("1abc") }
        #expect(throws: Username.Invalid.mustStartWithLetter) { try Username("_abc") }
        #expect(throws: Username.Invalid.invalidCharacter("/")) { try Username("ab/../c") }
        #expect(throws: Username.Invalid.invalidCharacter("<")) { try Username("a<script>") }
        #expect(throws: Username.Invalid.mustStartWithLetter) { try Username("élodie") }
    }

    @Test func comparesCaseInsensitivelyAndKeepsCasing() throws {
        let a = try Username("YBSC"), b = try Username("ybsc")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a.value == "YBSC")
        #expect(a.key == "ybsc")
    }

    @Test func listenBrainzNamesKeepTheirPrefixAndNeverMeetLastFMs() throws {
        let lb = try Username("  LB:Rob.Smith_2 ")
        #expect(lb.value == "lb:Rob.Smith_2")
        #expect(lb.key == "lb:rob.smith_2")
        #expect(lb.service == .listenBrainz)
        #expect(lb.serviceName == "Rob.Smith_2")
        let lastFM = try Username("rob")
        #expect(lastFM.service == .lastFM && lastFM.serviceName == "rob")
        #expect(try Username("lb:rob") != lastFM)
        // Longer than Last.fm allows, and a single character, are fine.
        #expect(try Username("lb:" + String(repeating: "a", count: 64)).serviceName.count == 64)
        #expect(try Username("lb:x").serviceName == "x")
        #expect(throws: Username.Invalid.listenBrainzName(nil)) { try Username("lb:") }
        #expect(throws: Username.Invalid.listenBrainzName(nil)) { try Username("lb:" + String(repeating: "a", count: 65)) }
        #expect(throws: Username.Invalid.listenBrainzName(".")) { try Username("lb:..") }
        #expect(throws: Username.Invalid.listenBrainzName("/")) { try Username("lb:a/b") }
        #expect(throws: Username.Invalid.listenBrainzName(" ")) { try Username("lb:a b") }
        #expect(throws: Username.Invalid.listenBrainzName(":")) { try Username("lb:lb:a") }
        #expect(throws: Username.Invalid.listenBrainzName("é")) { try Username("lb:élodie") }
        // The same name decoded from JSON.
        let decoded = try JSONDecoder().decode([Username].self, from: Data(#"["lb:Rob"]"#.utf8))
        #expect(decoded.first?.key == "lb:rob")
    }

    @Test func everyInvalidReasonReadsAsASentence() {
        let reasons: [Username.Invalid] = [.empty, .tooShort, .tooLong, .mustStartWithLetter, .invalidCharacter("!"),
                                           .listenBrainzName(nil), .listenBrainzName("/")]
        for reason in reasons {
            #expect(reason.description.hasSuffix("."))
        }
    }
}
