/// Why ListenBrainz could not answer, as `SourceError.listenBrainz` carries
/// it: the same kinds of failure as Last.fm's, in sentences that name
/// ListenBrainz.
public enum ListenBrainzFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// HTTP 404 for a user's listens: ListenBrainz has no such user.
    case userNotFound(user: String)
    /// HTTP 401: the token is missing, wrong or revoked.
    case invalidToken
    /// HTTP 429 after the client's own waits; `retryAfter` is the
    /// `X-RateLimit-Reset-In` seconds ListenBrainz gave, when it gave them.
    case rateLimited(retryAfter: Int?)
    /// HTTP 5xx (or a proxy's error page).
    case unavailable(status: Int)
    /// No answer within the client's timeout.
    case timeout
    /// The network failed: refused, reset, DNS.
    case transport(detail: String)
    /// The answer was not what the API documents (truncated, malformed, too big).
    case malformedResponse(detail: String)
    /// Any other 4xx, with ListenBrainz's own reason (its `error` field).
    case refused(status: Int, reason: String)
    /// Not a failure of ListenBrainz's: Vinylogue is still copying the
    /// user's listens into its archive, and charts them once it is done.
    case copying(user: String)

    /// What went wrong, in one sentence.
    public var message: String {
        switch self {
        case .userNotFound(let user): "ListenBrainz has no user “\(user)”."
        case .invalidToken: "ListenBrainz refused the token (it is wrong or was replaced)."
        case .rateLimited(let after?): "ListenBrainz is rate limiting requests (it asked to wait \(after) s)."
        case .rateLimited(nil): "ListenBrainz is rate limiting requests."
        case .unavailable(let status): "ListenBrainz is temporarily unavailable (HTTP \(status))."
        case .timeout: "ListenBrainz did not answer in time."
        case .transport(let detail): "Could not reach ListenBrainz (\(detail))."
        case .malformedResponse(let detail): "ListenBrainz sent a response Vinylogue could not read (\(detail))."
        case .refused(let status, let reason):
            "ListenBrainz refused the request (HTTP \(status)\(reason.isEmpty ? "" : ", “\(reason)”"))."
        case .copying(let user): "Vinylogue is copying \(user)'s listens from ListenBrainz; their charts appear as soon as it is done."
        }
    }

    /// Whether the same request may succeed later.
    public var isTemporary: Bool {
        switch self {
        case .rateLimited, .unavailable, .timeout, .transport, .malformedResponse, .copying: true
        case .userNotFound, .invalidToken, .refused: false
        }
    }

    public var description: String { message }
}
