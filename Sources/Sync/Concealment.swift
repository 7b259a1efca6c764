import Foundation
import VinylogueCore

/// The people a request must answer for as if they did not exist: those
/// whose visibility (`Visibility`) keeps their listening from the viewer.
/// The web app decides who they are, once per request, before anything
/// of theirs is read (the server's `Audiences`), and binds them here for
/// the request's task; `ListeningSources` then answers for them as for a
/// name Last.fm does not know, and the web app's kept pages and "now
/// playing" pass them by. Nothing else reads it; the command line, run by
/// the operator, never binds it.
public enum Concealment {
    /// The name keys (`Username.key`) concealed from this request.
    @TaskLocal public static var people: Set<String> = []

    /// Whether `user` is concealed from the request this task serves.
    public static func conceals(_ user: Username) -> Bool {
        let people = self.people
        return !people.isEmpty && people.contains(user.key)
    }

    /// Whether this request conceals anyone (its answers are then neither
    /// taken from nor kept in a cache shared with other viewers).
    public static var concealsAnyone: Bool { !people.isEmpty }

}
