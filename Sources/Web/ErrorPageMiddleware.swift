import Hummingbird
import Logging

/// Turns refusals into pages a person can read: a sentence and a way on.
/// `/api/` paths get `{"error": "..."}` instead; nothing shows a stack trace.
struct ErrorPageMiddleware<Context: RequestContext>: RouterMiddleware {
    let pages: PageRenderer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as SignInRequired {
            if request.uri.path.hasPrefix("/api/") { return APIResponse.error(status: .unauthorized, message: error.message) }
            var page = MessagePage(title: "Sign in first", heading: "Sign in first", csrf: "", message: error.message)
            page.linkURL = Paths.signIn
            page.linkLabel = "Sign in with Last.fm"
            return pages.response("message", page, status: .forbidden)
        } catch let error as PageError {
            return render(request, status: .badRequest, heading: "That address doesn’t work", message: error.message)
        } catch let error as HTTPError {
            let message = error.body ?? Self.sentence(for: error.status)
            var response = render(request, status: error.status, heading: Self.heading(for: error.status), message: message)
            // Keep what the error says about itself, such as a 405's `Allow`.
            for field in error.headers where response.headers[field.name] == nil { response.headers.append(field) }
            return response
        } catch {
            context.logger.error("request failed: \(error)")
            return render(request, status: .internalServerError, heading: "Something went wrong",
                          message: "Vinylogue hit an unexpected problem. Try again; if it keeps happening, check the server’s log.")
        }
    }

    func render(_ request: Request, status: HTTPResponse.Status, heading: String, message: String) -> Response {
        if request.uri.path.hasPrefix("/api/") { return APIResponse.error(status: status, message: message) }
        return pages.response("message", MessagePage(title: heading, heading: heading, csrf: "", message: message), status: status)
    }

    static func heading(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 404: "Page not found"
        case 403: "Not allowed"
        case 405: "Wrong kind of request"
        case 413: "Too large"
        default: "That didn’t work"
        }
    }

    static func sentence(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 404: "There is no page at this address. Start again from your users."
        case 405: "This address doesn’t accept that kind of request."
        default: "The request could not be handled (\(status.code))."
        }
    }
}
