import Foundation
import HTTPServing
import Hummingbird
import Stores
import Sync
import VinylogueCore

/// The settings page's forwarding section: where what players send here
/// goes on to (Last.fm with the account's sign-in, ListenBrainz with a
/// token the person enters), and how it stands: sent, waiting, failed with
/// the reason, and a button to try the failed ones again. The ListenBrainz
/// token is never shown back: only the name it belongs to.
struct ForwardingView {
    struct Service {
        let name: String
        let target: String
        let sent: String
        /// How many wait, and how many failed; nil for none (Mustache takes 0 as true).
        let waiting: Int?
        let failed: Int?
        /// Why the newest waiting or failed listen is not there yet.
        let reason: String?
    }

    let action: String
    /// Last.fm forwarding can be chosen (the viewer signed in with Last.fm here).
    let lastFMAvailable: Bool
    let toLastFM: Bool
    /// ListenBrainz forwarding can be chosen on this server.
    let listenBrainzAvailable: Bool
    /// The ListenBrainz name forwarded to, when a token is set.
    let listenBrainzUser: String?
    let listenBrainzSet: Bool
    let services: [Service]
    // Names of their own: Mustache looks a missing name up in the page
    // around it, so a nil `notice` here showed the page's "Settings saved."
    /// What the last change did.
    var changed: String?
    /// Why the last change was refused.
    var refusal: String?

    static func notice(_ change: String) -> String? {
        switch change {
        case "lastfm-on": "Listens you send here now go on to Last.fm too."
        case "lastfm-off": "Listens you send here no longer go on to Last.fm."
        case "listenbrainz-on": "Listens you send here now go on to ListenBrainz too."
        case "listenbrainz-off": "Listens you send here no longer go on to ListenBrainz; the token was forgotten."
        case "retry": "The failed listens are in line again."
        default: nil
        }
    }
}

extension SettingsRoutes {
    /// The forwarding section for `owner`, when this server forwards.
    func forwarding(of owner: ListOwner, request: Request, settings: Settings) async -> ForwardingView? {
        guard let forwarding = forwarding, !forwarding.targets.isEmpty else { return nil }
        let choice = (try? await forwarding.outbox.choice(of: owner)) ?? ForwardingChoice()
        let states = (try? await forwarding.outbox.states(of: owner)) ?? [:]
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = settings.timeZone
        formatter.dateFormat = "d MMMM yyyy, HH:mm"
        let services = ForwardingTarget.allCases.compactMap { target -> ForwardingView.Service? in
            guard forwarding.targets.contains(target), let state = states[target] else { return nil }
            let sent = state.sent == 0 ? "" : "\(state.sent) sent" + (state.lastSent.map { ", the last on \(formatter.string(from: $0))" } ?? "")
            return ForwardingView.Service(name: target.name, target: String(target.rawValue), sent: sent,
                                          waiting: state.waiting > 0 ? state.waiting : nil, failed: state.failed > 0 ? state.failed : nil,
                                          reason: state.waiting + state.failed > 0 ? state.problem : nil)
        }
        return ForwardingView(action: Paths.forwarding,
                              lastFMAvailable: forwarding.targets.contains(.lastFM) && choice.lastFMSession != nil,
                              toLastFM: choice.toLastFM,
                              listenBrainzAvailable: forwarding.targets.contains(.listenBrainz),
                              listenBrainzUser: choice.listenBrainzUser, listenBrainzSet: choice.listenBrainzToken != nil,
                              services: services)
    }

    /// `POST /settings/forwarding`: `lastfm=on|off`, `listenbrainz-token=…`
    /// (or `listenbrainz=off`), or `retry=<service>`.
    func changeForwarding(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        let owner = try await owner(of: context)
        guard let forwarding = forwarding else { throw HTTPError(.notFound) }
        let now = clock.now
        var change: String
        if let lastFM = form["lastfm"] {
            guard forwarding.targets.contains(.lastFM), try await forwarding.outbox.choice(of: owner).lastFMSession != nil else {
                return try await refuse("Forwarding to Last.fm needs you to be signed in with Last.fm here.", owner: owner, request: request, context: context, form: form)
            }
            try await forwarding.outbox.setForwardsToLastFM(lastFM == "on", for: owner, at: now)
            change = lastFM == "on" ? "lastfm-on" : "lastfm-off"
        } else if form["listenbrainz"] == "off" {
            try await forwarding.outbox.setListenBrainz(token: nil, user: nil, for: owner, at: now)
            change = "listenbrainz-off"
        } else if let token = form["listenbrainz-token"]?.trimmingWhitespace() {
            guard forwarding.targets.contains(.listenBrainz) else { throw HTTPError(.notFound) }
            switch await forwarding.checkListenBrainzToken(token) {
            case .success(let user):
                try await forwarding.outbox.setListenBrainz(token: token, user: user, for: owner, at: now)
                change = "listenbrainz-on"
            case .failure(let problem):
                return try await refuse(problem.message, owner: owner, request: request, context: context, form: form)
            }
        } else if let code = form["retry"].flatMap(Int.init), let target = ForwardingTarget(rawValue: code) {
            try await forwarding.outbox.retryFailed(of: owner, target: target, at: now)
            forwarding.wake()
            change = "retry"
        } else {
            return try await refuse("Choose what to change in the forwarding section.", owner: owner, request: request, context: context, form: form)
        }
        return .redirect(to: Paths.settings + "?forwarding=\(change)#forwarding", type: .normal)
    }

    private func refuse(_ sentence: String, owner: ListOwner, request: Request, context: Context, form: FormFields) async throws -> Response {
        let settings = await viewers.settings.current(for: owner)
        var view = view(settings, csrf: form["csrf"] ?? "")
        await addSections(to: &view, owner: owner, settings: settings, request: request, context: context)
        view.forwarding?.refusal = sentence
        return pages.response("settings", view, status: .unprocessableContent)
    }
}
