import Foundation
import HTTPServing
import Hummingbird
import MusicServers
import Stores
import VinylogueCore

/// People's own music servers, for the web app: where each owner's is kept
/// (`MusicServerSettings`) and how it is reached (`MusicServerAccess`:
/// the operator's policy, then the client).
struct OwnMusicServers: Sendable {
    let store: any MusicServerSettings
    let access: MusicServerAccess

    /// `setting` as a server to reach, or why not.
    static func server(_ setting: MusicServerSetting) -> Result<MusicServerAccess.Server, MusicServerAccessProblem> {
        MusicServerAccess.Server.parse(kind: setting.kind.rawValue, address: setting.address, username: setting.username,
                                       password: setting.password)
    }

    /// `owner`'s server as a library; nil when they have none.
    func library(of owner: ListOwner) async -> Result<any MusicLibrary, MusicServerAccessProblem>? {
        guard let setting = try? await store.musicServer(of: owner) else { return nil }
        switch Self.server(setting) {
        case .failure(let problem): return .failure(problem)
        case .success(let server): return await access.library(server)
        }
    }

    /// How a server is named to its owner: "nas.local:4533", "nas.local:6600 (mpd)".
    static func name(_ setting: MusicServerSetting) -> String {
        switch server(setting) {
        case .success(.subsonic(let account)): account.server
        case .success(.mpd(let account)): "\(account.server) (mpd)"
        case .failure: setting.address
        }
    }
}

/// The settings page's music server section: the server a person's
/// playlists go to (a Subsonic-API server or mpd). Its password is never
/// shown back, not even as dots: the field is always empty, and saving
/// with it empty keeps the one stored.
struct MusicServerView {
    let action: String
    let isSubsonic: Bool
    let isMPD: Bool
    let address: String
    let username: String
    let hasServer: Bool
    let status: String
    var changed: String?
    var problem: String?
}

extension SettingsRoutes {
    func musicServerSection(of owner: ListOwner) async -> MusicServerView? {
        guard let musicServers else { return nil }
        let setting = try? await musicServers.store.musicServer(of: owner)
        let status = setting.map {
            "Playlists you make go to \(OwnMusicServers.name($0))"
                + ($0.username.map { " as \($0)" } ?? "") + ". Change it below, or forget it."
        } ?? "Add the server you play your music from, and a week’s page can make its playlist there: a Subsonic-API server "
            + "(Navidrome, gonic, Airsonic, Supysonic) or mpd."
        return MusicServerView(action: Paths.musicServer, isSubsonic: setting?.kind != .mpd, isMPD: setting?.kind == .mpd,
                               address: setting?.address ?? "", username: setting?.username ?? "", hasServer: setting != nil, status: status)
    }

    static func musicServerNotice(_ changed: String) -> String? {
        switch changed {
        case "saved": "Your music server answered, and is saved."
        case "forgotten": "Your music server is forgotten, its password with it."
        default: nil
        }
    }

    /// `POST /settings/music-server`: `music=save` with the server's fields
    /// (checked by signing in there before anything is stored), or
    /// `music=forget`.
    func changeMusicServer(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let owner = try await owner(of: context)
        guard let musicServers else { throw HTTPError(.notFound) }
        if form["music"] == "forget" {
            try await musicServers.store.forgetMusicServer(of: owner)
            return .redirect(to: Paths.settings + "?music=forgotten#music", type: .normal)
        }
        guard form["music"] == "save" else { throw HTTPError(.badRequest, message: "Choose to save or to forget the server.") }
        let kind = form["kind"] ?? "", address = (form["address"] ?? "").trimmingWhitespace()
        let username = (form["username"] ?? "").trimmingWhitespace()
        var password = form["password"] ?? ""
        // An empty password keeps the stored one, for the same server and user.
        if password.isEmpty, let stored = try await musicServers.store.musicServer(of: owner), stored.kind.rawValue == kind,
           stored.address == address, (stored.username ?? "") == username {
            password = stored.password ?? ""
        }
        let problem: MusicServerAccessProblem?
        switch MusicServerAccess.Server.parse(kind: kind, address: address, username: username, password: password) {
        case .failure(let refused): problem = refused
        case .success(let server): problem = await musicServers.access.check(server)
        }
        if let problem {
            let settings = await viewers.settings.current(for: owner)
            var view = view(settings, csrf: form["csrf"] ?? "")
            await addSections(to: &view, owner: owner, settings: settings, request: request, context: context)
            // The fields as given (never the password), with why.
            view.music = MusicServerView(action: Paths.musicServer, isSubsonic: kind != "mpd", isMPD: kind == "mpd", address: address,
                                         username: username, hasServer: view.music?.hasServer ?? false, status: view.music?.status ?? "",
                                         problem: problem.sentence + " Nothing was saved.")
            return pages.response("settings", view, status: .unprocessableContent)
        }
        let setting = MusicServerSetting(kind: kind == "mpd" ? .mpd : .subsonic, address: address, username: kind == "mpd" ? nil : username,
                                         password: password)
        try await musicServers.store.setMusicServer(setting, of: owner, at: clock.now)
        return .redirect(to: Paths.settings + "?music=saved#music", type: .normal)
    }
}
