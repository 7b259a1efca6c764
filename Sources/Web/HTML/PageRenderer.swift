import Foundation
import Stores
import Hummingbird
import Mustache
import VinylogueCore

/// Renders the Mustache templates (HTML-escaped by default) inside the
/// shared layout.
public struct PageRenderer: Sendable {
    let library: MustacheLibrary

    /// Loads the templates shipped with the module.
    public static func bundled() async throws -> PageRenderer {
        guard let directory = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Templates"])
        }
        let library = try await MustacheLibrary(directory: directory.path)
        // The stylesheet and script are read here, at start-up, on a thread
        // of their own: never while a request waits, never on Swift's pool.
        _ = try await DedicatedThread.run(named: "vinylogue.assets") { StaticAssets.version }
        return PageRenderer(library: library)
    }

    /// The HTML of `template` for `context`; `context` must carry the
    /// layout's fields (see `LayoutFields`).
    func html(_ template: String, _ context: Any) -> String {
        // Names are shown as they were scrobbled, control characters but made visible (U+FFFD).
        XMLText.withoutControls(library.render(context, withTemplate: template)
            ?? "<!doctype html><title>Vinylogue</title><p>Template \(template) is missing.</p>")
    }

    func response(_ template: String, _ context: Any, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        if fields[.cacheControl] == nil { fields[.cacheControl] = "no-cache" }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html(template, context))))
    }
}

/// Fields every page's layout reads.
struct LayoutFields {
    var title: String
    var csrf: String
    var links = SiteLinks()
    var bodyClass: String = ""
    var feedURL: String? = nil
    var prefetchURL: String? = nil
    var themeURL: String? = nil
    /// Open Graph / Twitter card tags and the Share button, on pages worth sharing.
    var share: ShareLinks? = nil
}
