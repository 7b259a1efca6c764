import Hummingbird
import LastFM

/// Gives every request one `AnswerDeadline` for Last.fm, so a slow Last.fm
/// costs a page at most `patience` however many calls it makes: past it,
/// pages show saved copies or say Last.fm is slow, while the calls carry on
/// and fill the cache for the next visit.
struct AnswerDeadlineMiddleware<Context: RequestContext>: RouterMiddleware {
    let patience: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await AnswerDeadline.$current.withValue(AnswerDeadline(after: patience)) {
            try await next(request, context)
        }
    }
}
