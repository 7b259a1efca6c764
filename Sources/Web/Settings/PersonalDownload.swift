import Exports
import Foundation
import Hummingbird
import Stores
import VinylogueCore

/// `GET /settings/export`: everything the viewer keeps here as one ZIP
/// (`PersonalExport`): their archived listens in ListenBrainz's export
/// layout, their list, settings and forwarding, no secret. Streamed as it
/// is made, a month of listens at a time, never whole in memory. An
/// account downloads its own; on a household server, the household's
/// with "me"'s listens.
struct PersonalDownload: Sendable {
    typealias Context = WebRequestContext

    let viewers: Viewers
    let lists: any ListStore
    let archive: any ScrobbleArchive
    let outbox: (any ForwardingOutbox)?
    /// Digest subscriptions, whose address and schedule the export carries.
    let digests: any DigestStore
    let clock: WallClock

    func register(on router: Router<WebRequestContext>) {
        router.get(RouterPath(Paths.personalExport)) { request, context in try await self.download(request, context) }
    }

    /// Whose export `request`'s viewer may download: theirs.
    func export(for context: WebRequestContext) async throws -> PersonalExport {
        let owner: ListOwner, person: Username?
        var visibility: Visibility?
        switch await context.viewer {
        case .account(let account):
            (owner, person) = (account.owner, account.name)
            visibility = try await viewers.signIn?.accounts.visibility(of: account)
        case .household:
            let me = (try? await lists.owned(by: .household).users())?.first(where: \.isMe)
            (owner, person) = (.household, me.flatMap { try? Username($0.name) })
        case .visitor:
            throw SignInRequired(message: "Sign in with Last.fm to download your listening.")
        }
        var export = PersonalExport(person: person, owner: owner, archive: archive, list: lists, forwarding: outbox, clock: clock)
        export.visibility = visibility
        export.digest = try await digests.subscription(of: owner)
        return export
    }

    func download(_ request: Request, _ context: Context) async throws -> Response {
        let export = try await export(for: context)
        // Its first piece is read before the answer starts, so that a
        // database that cannot be read is a page saying so, not a broken file.
        if let person = export.person { _ = try await archive.span(for: person) }
        let body = ResponseBody { writer in
            try await export.write { bytes in try await writer.write(ByteBuffer(bytes: bytes)) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [
            .contentType: "application/zip",
            .contentDisposition: "attachment; filename=\"\(export.fileName)\"",
            .cacheControl: "no-store",
        ], body: body)
    }
}

/// The Settings section that offers the download.
struct DownloadView {
    let downloadURL: String
    let downloadAbout: String
}

extension SettingsRoutes {
    func download(for context: SettingsRoutes.Context) async -> DownloadView? {
        let person: String?
        switch await context.viewer {
        case .account(let account): person = account.name.value
        case .household: person = (try? await lists.owned(by: .household).users())?.first(where: \.isMe)?.name
        case .visitor: return nil
        }
        let listens = person.map { "\($0)’s listens archived here (in ListenBrainz’s export layout, which ListenBrainz and Vinylogue read back), " }
            ?? "Nobody on the list is marked as you, so there are no listens to include; "
        return DownloadView(downloadURL: Paths.personalExport,
                            downloadAbout: "One ZIP file with " + listens + "your list, your settings and where your listens are forwarded. "
                                + "Tokens and keys are left out.")
    }
}
