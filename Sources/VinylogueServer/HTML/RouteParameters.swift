import Hummingbird
import VinylogueCore

/// Reading typed values out of a route's path: one way, one message.
enum RouteParameters {
    static let notAUsername = "That is not a Last.fm username: they are 2–15 letters, digits, “_” or “-”, starting with a letter."

    /// The `:user` segment as a username, or a 400 page saying what a
    /// username looks like.
    static func user(_ context: some RequestContext) throws -> Username {
        guard let raw = context.parameters.get("user"), let user = Username(validating: raw) else {
            throw PageError.badRequest(notAUsername)
        }
        return user
    }
}
