import Foundation
import ListenBrainz
import LocalTestServer

extension ListenBrainzTransport {
    /// `fake` answering the ListenBrainz client directly, with no socket:
    /// for tests that need nothing else to reach it. Calls are routed as
    /// `FakeListenBrainzServer` routes them (`/1/user/{name}/listens`,
    /// `/1/submit-listens`, `/1/validate-token`; anything else is not
    /// found) and answered by the same `FakeListenBrainz.answer`.
    public static func inProcess(_ fake: FakeListenBrainz) -> ListenBrainzTransport {
        .inProcess { request in
            guard let call = call(request) else { return Answer(status: 404, body: Data()) }
            let answer = await fake.answer(call)
            return Answer(status: answer.status, remaining: answer.remaining, resetIn: answer.resetIn, body: answer.body)
        }
    }

    /// The API call `request` makes, or nil for an address the server has no route for.
    private static func call(_ request: Request) -> FakeListenBrainz.Call? {
        guard let address = URLComponents(string: request.url) else { return nil }
        let path = address.percentEncodedPath.split(separator: "/")
        let query = RequestFields.query(address.percentEncodedQuery ?? "")
        let token = request.token?.trimmingCharacters(in: .whitespaces)
        switch (request.method, path.count, path.first) {
        case (.get, 4, "1") where path[1] == "user" && path[3] == "listens":
            return .listens(user: String(path[2]), query: query)
        case (.post, 2, "1") where path[1] == "submit-listens":
            return .submit(token: token, body: request.body ?? Data())
        case (.get, 2, "1") where path[1] == "validate-token":
            return .validateToken(token ?? query["token"])
        case (.get, 4, "1") where path[1] == "user" && path[3] == "playlists":
            return .userPlaylists(user: String(path[2]), token: token, query: query)
        case (.post, 3, "1") where path[1] == "playlist" && path[2] == "create":
            return .createPlaylist(token: token, body: request.body ?? Data())
        case (.post, 4, "1") where path[1] == "playlist" && path[3] == "delete":
            return .deletePlaylist(token: token, mbid: String(path[2]))
        case (.get, 3, "1") where path[1] == "playlist":
            return .playlist(mbid: String(path[2]))
        default:
            return nil
        }
    }
}
