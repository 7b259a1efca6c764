import Testing
import VinylogueCLI
import VinylogueCore

/// What the command line says about a failure: what happened, then a next
/// step a person at a terminal can take.
@Suite struct CommandLineSentenceTests {
    static let everyCase: [SourceError] = [
        .notFound(what: "The user “x”"), .privateProfile(user: "x"), .invalidAPIKey(code: 10), .missingAPIKey, .rateLimited,
        .temporarilyUnavailable(detail: "error 11, “Service Offline”"), .timeout, .stillWaiting,
        .transport(detail: "the connection was refused"), .malformedResponse(detail: "truncated"), .api(code: 13, message: ""),
        .storage(detail: "locked"), .notArchived(user: "x"), .unreadableFile(path: "/tmp/x", reason: "it is a directory"),
        .diskFull(detail: "ENOSPC"),
        .listenBrainz(.userNotFound(user: "x")), .listenBrainz(.invalidToken), .listenBrainz(.rateLimited(retryAfter: 5)),
        .listenBrainz(.rateLimited(retryAfter: nil)), .listenBrainz(.unavailable(status: 503)), .listenBrainz(.timeout),
        .listenBrainz(.transport(detail: "the connection was refused")), .listenBrainz(.malformedResponse(detail: "truncated")),
        .listenBrainz(.refused(status: 400, reason: "bad")), .listenBrainz(.copying(user: "lb:x")), .notArchived(user: "lb:x"),
    ]

    /// Every message is a sentence with a next step, and Last.fm's own
    /// "try again" does not repeat ours.
    @Test(arguments: everyCase)
    func aSentenceAndANextStep(error: SourceError) {
        #expect(error.message.hasSuffix("."))
        #expect(!error.nextStep.isEmpty && error.nextStep.hasSuffix("."))
        #expect(error.forTerminal == error.message + " " + error.nextStep)
        #expect(error.forTerminal.lowercased().components(separatedBy: "try again").count <= 2, "\(error.forTerminal)")
    }

    @Test func theStepsFitATerminal() {
        #expect(SourceError.temporarilyUnavailable(detail: "error 11, “Service Offline”").forTerminal
            == "Last.fm is temporarily unavailable (error 11, “Service Offline”). Try again in a few minutes.")
        #expect(SourceError.missingAPIKey.nextStep.contains("export LASTFM_API_KEY="))
        #expect(SourceError.transport(detail: "the connection was refused").nextStep.contains("network"))
        #expect(SourceError.diskFull(detail: "ENOSPC").nextStep.contains("Free some space"))
        #expect(!SourceError.unreadableFile(path: "/tmp/x", reason: "it is a directory").nextStep.contains("--data-dir"))
    }
}
