import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// What Settings' "Your listening history" section reads: where the copy
/// of the person's own history into the archive stands, why it is made,
/// and a button to start or stop it.
struct HistoryCopyView {
    let action: String
    let user: String
    /// Where the copy stands, in a sentence or two.
    let status: String
    /// A failure's reason, said as an error.
    let problem: String?
    /// The button: "start" or "stop", and its label.
    let command: String
    let commandLabel: String
    /// After a start or a stop: what was done.
    var changed: String?
    /// "Delete what was copied", when anything may have been.
    var deleteCopiedLabel: String? = nil
}

extension SettingsRoutes {
    /// The person the viewer's history copy is of: the account, or the
    /// household's "me"; nil for anyone else, or when copies are off.
    func copiedPerson(for context: Context) async -> Username? {
        guard copies != nil else { return nil }
        return await ownListening(of: context)
    }

    /// Whose listening the viewer speaks for: the account's, or the
    /// household's "me"; nil for a visitor, or a household without "me".
    func ownListening(of context: Context) async -> Username? {
        await OwnListening(lists: lists).person(of: context)
    }

    func historyCopy(for context: Context, settings: Settings) async -> HistoryCopyView? {
        guard let copies, let user = await copiedPerson(for: context) else { return nil }
        let copy = await copies.copy(of: user)
        let service = user.service.displayName
        let why = "Vinylogue keeps your whole \(service) history in its own archive, so that every chart, every year, "
            + "rediscover and album pages work at once, and even while \(service) is down."
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = settings.timeZone
        formatter.dateFormat = "d MMMM yyyy, HH:mm"
        var problem: String?
        let status: String, command: String, label: String
        switch copy?.state {
        case nil:
            (status, command, label) = ("\(why) It has not been copied yet.", "start", "Copy my \(service) history")
        case .queued?, .copying?:
            let progress = copy.flatMap { CopyProgressNote.sentence($0, whose: "your", secondsLeft: copies.secondsLeft($0)) } ?? ""
            (status, command, label) = ("\(progress) \(why) Stopping keeps what was copied so far.", "stop", "Stop copying")
        case .done?:
            let when = (copy?.doneAt).map { " on \(formatter.string(from: $0))" } ?? ""
            (status, command, label) = ("Your \(service) history was copied\(when). \(why) What is new is copied when you visit, "
                + "at most once an hour.", "start", "Copy what is new now")
        case .stopped? where copy?.scrobbles == 0 && copy?.pagesDone == 0:
            (status, command, label) = ("Nothing of your \(service) history is copied here: you stopped the copy, or deleted what it "
                + "copied. \(why)", "start", "Copy my \(service) history")
        case .stopped?:
            (status, command, label) = ("You stopped the copy of your \(service) history; what was copied is kept. \(why)", "start",
                                        "Go on copying")
        case .failed?:
            problem = copy?.reason.map { "The last copy stopped: \($0)" }
            (status, command, label) = ("\(why) It goes on by itself in a few minutes when you visit, where it stopped.", "start", "Try again now")
        }
        var view = HistoryCopyView(action: Paths.historyCopy, user: user.value, status: status, problem: problem, command: command,
                                   commandLabel: label)
        if archive != nil, let copy, copy.scrobbles > 0 || copy.pagesDone > 0 || copy.state == .copying {
            view.deleteCopiedLabel = "Delete what was copied from \(service)"
        }
        return view
    }

    /// `POST /settings/history`: `copy=start|stop` for the viewer's own history.
    func changeHistoryCopy(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        _ = try await owner(of: context)
        guard let copies, let user = await copiedPerson(for: context) else {
            throw SignInRequired(message: "Mark yourself on the list (or sign in with Last.fm) to copy your history.")
        }
        let changed: String
        switch form["copy"] {
        case "start":
            _ = try await copies.start(user)
            changed = "started"
        case "stop":
            changed = try await copies.stop(user) ? "stopped" : "none"
        case "delete":
            guard let archive else { throw HTTPError(.badRequest, message: "Choose to start or to stop the copy.") }
            let forgotten = try await copies.forget(user, from: archive)
            await changes.changed(.listens(user))
            changed = "deleted-\(forgotten)"
        default:
            throw HTTPError(.badRequest, message: "Choose to start or to stop the copy.")
        }
        return .redirect(to: Paths.settings + "?history=\(changed)#history", type: .normal)
    }

    static func historyNotice(_ changed: String) -> String? {
        switch changed {
        case "started": "The copy has started; this page shows how far it has come."
        case "stopped": "The copy is stopped. What was copied is kept."
        case "none": "No copy was running."
        case let deleted where deleted.hasPrefix("deleted-"):
            "What was copied is deleted (\(grouped(Int(deleted.dropFirst("deleted-".count)) ?? 0)) listens); the copy stays stopped until "
                + "you start it. Listens imported or sent by your players are kept, and your charts come from them and from Last.fm again."
        default: nil
        }
    }
}
