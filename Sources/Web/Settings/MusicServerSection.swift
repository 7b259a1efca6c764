import Foundation
import HTTPServing
import Hummingbird
import MusicServers
import Stores
import VinylogueCore
import Workers

/// People's own music servers, for the web app: where each owner's is kept
/// (`MusicServerSettings`) and how it is reached (`MusicServerAccess`:
/// the operator's policy, then the client).
struct OwnMusicServers: Sendable {
    let store: any MusicServerSettings
    let access: MusicServerAccess
    /// Wakes the job runner, which queues a weekly playlist just kept.
    var queued: Wakeup? = nil

    /// `setting` as a server to reach, or why not.
    static func server(_ setting: MusicServerSetting) -> Result<MusicServerAccess.Server, MusicServerAccessProblem> {
        MusicServerAccess.Server.parse(kind: setting.kind.rawValue, address: setting.address, username: setting.username,
                                       password: setting.password)
    }

    /// What `body` does with `owner`'s server as a library (reached as
    /// `MusicServerAccess.withLibrary` reaches it), or why it cannot be;
    /// nil when they have none.
    func withLibrary<Value: Sendable>(of owner: ListOwner,
                                      _ body: (any MusicLibrary) async -> Value) async -> Result<Value, MusicServerAccessProblem>? {
        guard let setting = try? await store.musicServer(of: owner) else { return nil }
        switch Self.server(setting) {
        case .failure(let problem): return .failure(problem)
        case .success(let server): return await access.withLibrary(server, body)
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
    /// The weekly playlist kept there, once there is a server.
    var weekly: WeeklyView?

    /// "Every week, by itself": the playlist of this week, N years ago,
    /// made again on the server whenever the week changes.
    struct WeeklyView {
        struct Choice {
            let value: Int
            let label: String
            let selected: Bool
        }

        let status: String
        /// What its last run did, and when.
        let lastRun: String?
        let choices: [Choice]
        let keeps: Bool
        let keepLabel: String
    }

    /// How far back a kept playlist may look.
    static let keptYears = 1...30
}

extension SettingsRoutes {
    func musicServerSection(of owner: ListOwner, settings: Settings) async -> MusicServerView? {
        guard let musicServers else { return nil }
        let setting = try? await musicServers.store.musicServer(of: owner)
        let status = setting.map {
            "Playlists you make go to \(OwnMusicServers.name($0))"
                + ($0.username.map { " as \($0)" } ?? "") + ". Change it below, or forget it."
        } ?? "Add the server you play your music from, and a week’s page can make its playlist there: a Subsonic-API server "
            + "(Navidrome, gonic, Airsonic, Supysonic) or mpd."
        var view = MusicServerView(action: Paths.musicServer, isSubsonic: setting?.kind != .mpd, isMPD: setting?.kind == .mpd,
                                   address: setting?.address ?? "", username: setting?.username ?? "", hasServer: setting != nil, status: status)
        if let setting {
            view.weekly = Self.weeklyView((try? await musicServers.store.keptPlaylist(of: owner)) ?? nil, on: setting, timeZone: settings.timeZone)
        }
        return view
    }

    static func weeklyView(_ kept: KeptPlaylist?, on setting: MusicServerSetting, timeZone: TimeZone) -> MusicServerView.WeeklyView {
        let years = kept?.yearsAgo ?? 1
        let choices = MusicServerView.keptYears.map {
            MusicServerView.WeeklyView.Choice(value: $0, label: $0 == 1 ? "1 year ago" : "\($0) years ago", selected: $0 == years)
        }
        guard let kept else {
            return .init(status: "Keep this week, years ago, as a playlist on \(OwnMusicServers.name(setting)): Vinylogue makes it again each "
                            + "week, by itself, from your own copy of your history.",
                         lastRun: nil, choices: choices, keeps: false, keepLabel: "Keep it every week")
        }
        let name = WeekPlaylist.title(yearsAgo: kept.yearsAgo)
        var lastRun: String?
        if let notedAt = kept.notedAt, let note = kept.note {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_GB")
            formatter.timeZone = timeZone
            formatter.dateFormat = "d MMMM yyyy, HH:mm"
            lastRun = "Last run, \(formatter.string(from: notedAt)): \(note)"
        } else {
            lastRun = "It is being made now; this page says how it went once it is done."
        }
        return .init(status: "\(OwnMusicServers.name(setting)) keeps “\(name)”: Vinylogue makes it again each time the week changes.",
                     lastRun: lastRun, choices: choices, keeps: true, keepLabel: "Change the years")
    }

    static func musicServerNotice(_ changed: String) -> String? {
        switch changed {
        case "saved": "Your music server answered, and is saved."
        case "forgotten": "Your music server is forgotten, its password with it, and no playlist is kept there any more."
        case "kept": "Your weekly playlist is being made now, and will be made again each week."
        case "stopped": "No playlist is kept on your server any more. The last one made is left there, yours to keep or delete."
        default: nil
        }
    }

    /// `POST /settings/music-server`: `music=save` with the server's fields
    /// (checked by signing in there before anything is stored),
    /// `music=forget`, `music=keep` with `years` (the weekly playlist), or
    /// `music=stop` (no weekly playlist).
    func changeMusicServer(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let owner = try await owner(of: context)
        guard let musicServers else { throw HTTPError(.notFound) }
        switch form["music"] {
        case "forget":
            try await musicServers.store.forgetMusicServer(of: owner)
            return .redirect(to: Paths.settings + "?music=forgotten#music", type: .normal)
        case "keep":
            guard let years = form["years"].flatMap(Int.init), MusicServerView.keptYears.contains(years) else {
                throw HTTPError(.badRequest, message: "Choose how many years back the weekly playlist is, from 1 to \(MusicServerView.keptYears.upperBound).")
            }
            guard try await musicServers.store.keepPlaylist(yearsAgo: years, of: owner, at: clock.now) else {
                throw HTTPError(.conflict, message: "Add your music server first: the weekly playlist is kept there.")
            }
            // Queued now (the runner's looks would, within its poll), and the runner woken.
            let zone = await viewers.settings.current(for: owner).timeZone
            _ = try await musicServers.store.queueKeptPlaylist(of: owner, week: WeeklyPlaylists.week(yearsAgo: years, from: clock.now, timeZone: zone),
                                                               at: clock.now)
            musicServers.queued?.signal()
            return .redirect(to: Paths.settings + "?music=kept#music", type: .normal)
        case "stop":
            try await musicServers.store.keepPlaylist(yearsAgo: nil, of: owner, at: clock.now)
            return .redirect(to: Paths.settings + "?music=stopped#music", type: .normal)
        default:
            break
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
                                         problem: problem.sentence + " Nothing was saved.", weekly: view.music?.weekly)
            return pages.response("settings", view, status: .unprocessableContent)
        }
        let setting = MusicServerSetting(kind: kind == "mpd" ? .mpd : .subsonic, address: address, username: kind == "mpd" ? nil : username,
                                         password: password)
        try await musicServers.store.setMusicServer(setting, of: owner, at: clock.now)
        return .redirect(to: Paths.settings + "?music=saved#music", type: .normal)
    }
}
