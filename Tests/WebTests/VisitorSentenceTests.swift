import Testing
import VinylogueCore
import Web

/// What the web app tells a visitor about a failure: a sentence and a next
/// step they can take, never a command or a server setting.
@Suite struct VisitorSentenceTests {
    /// One of each case (a new case must be added here and in both front
    /// ends' sentences, which switch over every case).
    static let everyCase: [SourceError] = [
        .notFound(what: "The user “x”"), .privateProfile(user: "x"), .invalidAPIKey(code: 10), .missingAPIKey, .rateLimited,
        .temporarilyUnavailable(detail: "HTTP 503"), .timeout, .stillWaiting, .transport(detail: "the connection was refused"),
        .malformedResponse(detail: "truncated"), .api(code: 13, message: ""), .storage(detail: "locked"), .notArchived(user: "x"),
        .unreadableFile(path: "/tmp/x", reason: "it is a directory"), .diskFull(detail: "ENOSPC"),
        .listenBrainz(.userNotFound(user: "x")), .listenBrainz(.invalidToken), .listenBrainz(.rateLimited(retryAfter: 5)),
        .listenBrainz(.rateLimited(retryAfter: nil)), .listenBrainz(.unavailable(status: 503)), .listenBrainz(.timeout),
        .listenBrainz(.transport(detail: "the connection was refused")), .listenBrainz(.malformedResponse(detail: "truncated")),
        .listenBrainz(.refused(status: 400, reason: "bad")), .listenBrainz(.copying(user: "lb:x")), .notArchived(user: "lb:x"),
        .copyFailed(user: "x", reason: "Last.fm did not answer in time."), .cancelled(job: "The copy of x's history"),
    ]

    /// A "Try again" that cannot help is not offered: the demo without an
    /// API key showed one under "No Last.fm API key is configured".
    @Test func tryAgainIsOfferedOnlyWhereAskingAgainMayAnswer() {
        let cannot = Self.everyCase.filter { !$0.retryMayHelp }
        #expect(cannot == [.invalidAPIKey(code: 10), .missingAPIKey, .unreadableFile(path: "/tmp/x", reason: "it is a directory"),
                           .listenBrainz(.invalidToken), .cancelled(job: "The copy of x's history")])
    }

    /// Used to fail: a chart page without an API key told its visitor to
    /// run `export LASTFM_API_KEY=yourkey`, and a page for an unarchived
    /// user to run `vinylogue sync`.
    @Test(arguments: everyCase)
    func neverTellsAVisitorToRunACommand(error: SourceError) {
        let text = error.forVisitors
        for command in ["`", "export LASTFM", "vinylogue ", "--", "LASTFM_API_KEY", "$"] {
            #expect(!text.contains(command), "\(error): \(text)")
        }
        #expect(text.hasPrefix(error.message))
        #expect(text.hasSuffix("."))
    }
}
