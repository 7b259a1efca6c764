/// Why a source of listening data could not answer.
///
/// Every case reads as a sentence saying what happened (`message`). What to
/// do next depends on where the person is, so each front end says it: the
/// command line (`nextStep`, and an exit code) and the web app
/// (`forVisitors`, and an HTTP status) each in their own words.
public enum SourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Last.fm error 6: no such user (or album, or artist).
    case notFound(what: String)
    /// Last.fm error 17: the profile hides its listening data.
    case privateProfile(user: String)
    /// Last.fm errors 10 and 26: the API key is wrong or suspended.
    case invalidAPIKey(code: Int)
    /// No key is configured at all.
    case missingAPIKey
    /// Last.fm error 29, or HTTP 429.
    case rateLimited
    /// Last.fm errors 8, 11, 16, or an HTTP 5xx: worth retrying later.
    case temporarilyUnavailable(detail: String)
    /// The request took too long.
    case timeout
    /// Last.fm had not answered by the time the person asking could wait
    /// (a web page's patience); the request carries on in the background and
    /// its answer is kept for the next visit.
    case stillWaiting
    /// The network failed: refused, reset, DNS.
    case transport(detail: String)
    /// The answer was not what the API documents (truncated, malformed, too big).
    case malformedResponse(detail: String)
    /// Any other Last.fm error code.
    case api(code: Int, message: String)
    /// A local archive or file could not be read.
    case storage(detail: String)
    /// The local archive holds nothing for this user.
    case notArchived(user: String)
    /// A file to import could not be read: missing, a directory, no permission.
    case unreadableFile(path: String, reason: String)
    /// The disk (or the database's size limit) is full: SQLITE_FULL, ENOSPC.
    case diskFull(detail: String)
    /// ListenBrainz could not answer (its own sentences: see `ListenBrainzFailure`).
    case listenBrainz(ListenBrainzFailure)
    /// A copy of `user`'s history into the archive stopped, for `reason`
    /// (a sentence kept with the copy).
    case copyFailed(user: String, reason: String)
    /// A job's write found its claim gone: the job was cancelled (its
    /// person's data deleted, the copy stopped) or taken over, so the write
    /// stored nothing (`JobFence`). `job` names it for the person.
    case cancelled(job: String)

    /// What a name Last.fm does not know answers (and so a person whose
    /// listening is hidden from the viewer, who must answer the same).
    public static func unknownUser(_ user: Username) -> SourceError {
        .notFound(what: "The user “\(user.value)”")
    }

    /// What went wrong, in one sentence.
    public var message: String {
        switch self {
        case .notFound(let what): "\(what) was not found on Last.fm."
        case .privateProfile(let user): "\(user)'s listening history is private on Last.fm."
        case .invalidAPIKey(let code): "Last.fm rejected the API key (error \(code))."
        case .missingAPIKey: "No Last.fm API key is configured."
        case .rateLimited: "Last.fm is rate limiting requests from this API key."
        case .temporarilyUnavailable(let detail): "Last.fm is temporarily unavailable (\(detail))."
        case .timeout: "Last.fm did not answer in time."
        case .stillWaiting: "Last.fm is slow to answer right now; Vinylogue is still waiting for it."
        case .transport(let detail): "Could not reach Last.fm (\(detail))."
        case .malformedResponse(let detail): "Last.fm sent a response Vinylogue could not read (\(detail))."
        case .api(let code, let message): "Last.fm refused the request (error \(code)\(message.isEmpty ? "" : ", “\(message)”"))."
        case .storage(let detail): "The local archive could not be opened or read (\(detail))."
        case .notArchived(let user): "Nothing is archived for “\(user)” yet."
        case .unreadableFile(let path, let reason): "“\(path)” could not be read: \(reason)."
        case .diskFull(let detail): "The disk holding the local archive is full (\(detail))."
        case .listenBrainz(let failure): failure.message
        case .copyFailed(let user, let reason): "The copy of \(user)'s history stopped: \(reason)"
        case .cancelled(let job): "\(job) was cancelled, so nothing more of it was stored."
        }
    }

    /// Whether repeating the same request later may succeed. A truncated,
    /// malformed or oversized answer is a failure of the moment like any
    /// other, so a saved copy stands in for it.
    public var isTemporary: Bool {
        switch self {
        case .temporarilyUnavailable, .timeout, .stillWaiting, .transport, .rateLimited, .malformedResponse: true
        case .listenBrainz(let failure): failure.isTemporary
        case .copyFailed: true
        default: false
        }
    }

    public var description: String { message }
}
