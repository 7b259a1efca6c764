import Artwork
import Foundation
import LastFM
import LocalTestServer

extension LastFMTransport {
    /// `fake` answering the Last.fm client directly, with no socket: for
    /// tests that need nothing else to reach it. A request's parameters
    /// are read as `FakeLastFMServer` reads them (the query of a GET, the
    /// form of a POST), so a request means the same either way; any path
    /// but the API's `/2.0/` is not found, as on the server.
    public static func inProcess(_ fake: FakeLastFM) -> LastFMTransport {
        .inProcess { url, form in
            guard let address = URLComponents(string: url), ["/2.0", "/2.0/"].contains(address.percentEncodedPath) else {
                return HTTPReply(status: 404, body: Data())
            }
            let parameters = form.map(RequestFields.form) ?? RequestFields.query(address.percentEncodedQuery ?? "")
            let reply = await fake.answer(parameters)
            return HTTPReply(status: reply.status, body: reply.body)
        }
    }
}

extension ArtworkUpstream {
    /// `fake`'s image host answering the art store directly, with no
    /// socket: `…/i/u/{size}/{file}`, as `FakeLastFMServer` serves it (any
    /// other address is not found). An image over `maxBytes` is refused as
    /// the live upstream refuses it.
    public static func inProcess(_ fake: FakeLastFM, maxBytes: Int = ArtworkUpstream.defaultMaxBytes) -> ArtworkUpstream {
        ArtworkUpstream { url in
            let path = URLComponents(string: url)?.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false) ?? []
            guard path.count == 5, path[1] == "i", path[2] == "u",
                  let png = await fake.image(size: String(path[3]), file: String(path[4])) else {
                return (404, Data())
            }
            guard png.count <= maxBytes else { throw ArtworkError.tooLarge }
            return (200, png)
        }
    }
}
