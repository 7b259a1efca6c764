import Foundation
import VinylogueCore

/// `lb:` users' profiles: ListenBrainz has no profile call a visitor may
/// make without a token, so a user is confirmed by asking for one listen,
/// which also gives their own spelling of the name.
extension ListenBrainzClient: UserSource {
    /// `user` (an `lb:` name) as ListenBrainz spells it; the play count is
    /// unknown (0). A Last.fm name is not ListenBrainz's to answer.
    public func user(_ user: Username) async throws(SourceError) -> User {
        guard user.service == .listenBrainz else { throw .notFound(what: "“\(user.value)”") }
        let page = try await listens(of: user.serviceName, count: 1)
        let spelled = page.userName.flatMap { Username(validating: Username.listenBrainzPrefix + $0) }
        return User(name: spelled ?? user, url: "https://listenbrainz.org/user/\(Self.pathSegment(user.serviceName))/")
    }

    /// ListenBrainz's follows are not read: nobody is imported as a friend.
    public func friends(of user: Username) async throws(SourceError) -> [User] { [] }
}

/// The window a sync of an `lb:` user asks for (`ListenBrainzHistory`).
extension ListenBrainzClient {
    public func window(of user: String, minTs: Int64, maxTs: Int64, count: Int) async throws(SourceError) -> (listens: [Scrobble], sent: Int) {
        let page = try await listens(of: user, minTs: minTs, maxTs: maxTs, count: count)
        return (page.listens, page.count)
    }
}
