import Foundation
import Hummingbird
import VinylogueCore

/// `/u/{user}/cover/{artist}/{album}`: the album's art, found lazily through
/// album details and served from our own origin.
struct CoverRoutes: Sendable {
    typealias Context = BasicRequestContext

    let dependencies: ServerDependencies

    func register(on router: Router<Context>) {
        router.get("/u/:user/cover/:artist/:album") { _, _ in Self.placeholder() }
    }

    /// A neutral square shown while art loads or when there is none.
    static func placeholder() -> Response {
        Response(status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "public, max-age=86400"],
                 body: .init(byteBuffer: ByteBuffer(string: Self.placeholderSVG)))
    }

    static let placeholderSVG = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" fill="#8a857c" opacity=".35"/>\
        <circle cx="32" cy="32" r="18" fill="none" stroke="#8a857c" stroke-width="2" opacity=".6"/>\
        <circle cx="32" cy="32" r="4" fill="#8a857c" opacity=".6"/></svg>
        """
}
