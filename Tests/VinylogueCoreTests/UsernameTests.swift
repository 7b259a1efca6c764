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

    @Test func everyInvalidReasonReadsAsASentence() {
        let reasons: [Username.Invalid] = [.empty, .tooShort, .tooLong, .mustStartWithLetter, .invalidCharacter("!")]
        for reason in reasons {
            #expect(reason.description.hasSuffix("."))
        }
    }
}
