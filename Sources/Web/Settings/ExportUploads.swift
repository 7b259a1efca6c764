import Foundation
import HTTPServing
import Hummingbird
import Imports
import ListenIngest
import Stores
import VinylogueCore
import Workers

/// `POST /settings/import`: an export uploaded from Settings, streamed to
/// disk as it arrives (never held whole), then imported in the background
/// into the viewer's own archive (the account's, or the household's "me")
/// as a durable job (`UploadedImports`). Settings lists the uploads with
/// what the importer said of each.
struct ExportUploads: Sendable {
    let viewers: Viewers
    let lists: any ListStore
    let uploads: UploadedImports
    let pages: PageRenderer
    let configuration: ServerConfiguration
    let fileIO = FileIO()

    func register(on router: Router<WebRequestContext>) {
        router.post(RouterPath(Paths.exportUpload)) { request, context in try await self.upload(request, context) }
    }

    /// Whose archive an upload of `request`'s viewer goes into.
    func person(for context: WebRequestContext) async throws -> (owner: ListOwner, user: Username) {
        switch await context.viewer {
        case .account(let account): return (account.owner, account.name)
        case .household:
            guard let me = (try? await lists.owned(by: .household).users())?.first(where: \.isMe), let user = try? Username(me.name) else {
                throw UploadRefusal(status: .unprocessableContent,
                                    message: "Nobody on the list is marked as you, so an export has nowhere to go. Add yourself on the users page first.")
            }
            return (.household, user)
        case .visitor:
            throw SignInRequired(message: "Sign in with Last.fm to bring your own history in.")
        }
    }

    func upload(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        do {
            return try await receive(request, context)
        } catch let refusal as UploadRefusal {
            return pages.response("message", MessagePage.settings(title: "Upload refused", heading: "The export was not stored", message: refusal.message,
                                                       section: "imports"), status: refusal.status)
        }
    }

    func receive(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        guard let boundary = UploadedFile.boundary(of: request.headers[.contentType]) else {
            throw UploadRefusal(status: .unsupportedMediaType,
                                message: "Uploads come from the form on Settings (as multipart/form-data). Choose the file there and send it.")
        }
        let (owner, user) = try await person(for: context)
        try FileManager.default.createDirectory(at: uploads.directory, withIntermediateDirectories: true)
        let partial = uploads.directory.appendingPathComponent("\(UUID().uuidString.lowercased()).part")
        let found = UploadedFile.FoundParts()
        let file = UploadedFile(body: request.body, boundary: boundary, limit: configuration.maxUploadBytes, found: found) { fields in
            try CSRFProtection.verify(request, form: FormFields(values: fields))
        }
        do {
            try await fileIO.writeFile(contents: file, path: partial.path, context: context)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            if let refusal = found.refusal { throw refusal }
            if error is UploadRefusal || error is HTTPError { throw error }
            throw UploadRefusal(status: .serviceUnavailable, message: "The upload could not be saved on this server, so nothing was stored. "
                + "Try again in a moment; if it keeps happening, whoever runs this Vinylogue should check its data directory's free space.")
        }
        guard found.complete, let fileName = found.fileName else {
            try? FileManager.default.removeItem(at: partial)
            throw UploadRefusal(status: .badRequest, message: "The upload held no file. Choose the export file and send the form again.")
        }
        guard found.bytes > 0 else {
            try? FileManager.default.removeItem(at: partial)
            throw UploadRefusal(status: .unprocessableContent, message: "“\(fileName)” is empty. Choose the export file itself.")
        }
        let path = uploads.newUploadPath(for: fileName)
        do {
            try FileManager.default.moveItem(at: partial, to: path)
            _ = try await uploads.queue(path, fileName: fileName, bytes: found.bytes, for: user, owner: owner)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            try? FileManager.default.removeItem(at: path)
            throw UploadRefusal(status: .serviceUnavailable, message: "The upload could not be queued, so nothing was stored. Try again in a moment.")
        }
        return .redirect(to: Paths.settings + "?import=queued#imports", type: .normal)
    }
}

/// What Settings' "Bring in an export" section reads.
struct ImportsView {
    let action: String
    let maxMegabytes: Int
    let formats: String
    let jobs: [Job]
    /// After an upload: that it is stored and waits.
    var uploadNotice: String?

    struct Job {
        let fileName: String
        let when: String
        let state: String
        let summary: String?
        let reason: String?
    }
}

extension SettingsRoutes {
    /// "812 bytes", "14 KB", "3.2 MB".
    static func size(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) byte\(bytes == 1 ? "" : "s")" }
        if bytes < 1 << 20 { return "\(grouped(Int(bytes >> 10))) KB" }
        return String(format: "%.1f MB", Double(bytes) / Double(1 << 20))
    }

    /// An import's summary as Settings shows it, at every load: at most
    /// its first 8 KB, cut after a line. The importer's own are shorter
    /// (`ImportSummary.report`); one kept by an earlier version of it may
    /// not be.
    static func shown(_ summary: String) -> String {
        guard summary.utf8.count > 8192 else { return summary }
        let head = String(decoding: summary.utf8.prefix(8192), as: UTF8.self)
        return head[..<(head.lastIndex(of: "\n") ?? head.endIndex)] + "\n… (the rest is left out)\n"
    }

    func imports(of owner: ListOwner, settings: Settings) async -> ImportsView? {
        guard let uploads else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = settings.timeZone
        formatter.dateFormat = "d MMMM yyyy, HH:mm"
        let jobs = ((try? await uploads.jobs.jobs(of: owner, limit: 10)) ?? []).map { job in
            let state = switch job.state {
            case .queued: "waiting to be imported"
            case .importing: "being imported now"
            case .done: "imported"
            case .failed: "not imported"
            }
            return ImportsView.Job(fileName: job.fileName, when: formatter.string(from: job.queuedAt),
                                   state: "\(Self.size(job.bytes)), \(state)", summary: job.summary.map(Self.shown), reason: job.reason)
        }
        return ImportsView(action: Paths.exportUpload, maxMegabytes: configuration.maxUploadBytes >> 20,
                           formats: "a Last.fm CSV or JSON export, a ListenBrainz export ZIP, Spotify's my_spotify_data.zip, "
                               + "a Rockbox .scrobbler.log or a Maloja export", jobs: jobs)
    }
}

extension BodyLimits {
    /// The web app's body limits: the listen APIs' own, an uploaded
    /// export's (`uploads` bytes), and `forms` bytes for every other form.
    static func web(forms: Int, uploads: Int) -> BodyLimits {
        let upload = BodyLimits.Limit(bytes: uploads) { _ in
            BodyLimits.Refusal(contentType: "text/plain; charset=utf-8",
                               body: "The export is too large: this Vinylogue takes uploads of at most \(uploads >> 20) MB. "
                                   + "Upload the export's files one at a time, or ask whoever runs it to import it.\n")
        }
        return BodyLimits(forms: forms, routes: ListenBodyLimits.routes.merging(["/settings/import": upload]) { $1 })
    }
}
