import Foundation
import HTTPServing
import Hummingbird
import Logging
import Mail
import Stores
import VinylogueCore
import Workers

/// The weekly digest's routes: `POST /settings/digest` (save an address
/// and schedule, send now, send the confirmation again, turn it off), the
/// confirmation link `/digest/confirm?token=…` and the unsubscribe link
/// `/digest/unsubscribe?token=…`, which work without signing in. Each link
/// opened (GET or HEAD) shows a button and changes nothing, since mail
/// scanners and link checkers open links; its POST acts (the button, or a
/// mail client's RFC 8058 one-click POST to the unsubscribe link).
///
/// Confirmation emails go to addresses nobody has confirmed yet, so an
/// owner gets at most `WeeklyDigests.confirmationsPerHour` of them an hour,
/// whichever addresses they are for. Past that, no address is changed: one
/// kept would wait for a link that is not sent, and a confirmed one it
/// replaced would stop getting its digests.
struct DigestSettings: Sendable {
    typealias Context = WebRequestContext

    let viewers: Viewers
    let digests: WeeklyDigests
    let pages: PageRenderer
    let configuration: ServerConfiguration
    let logger = Logger(label: "vinylogue.digests")

    func register(on router: Router<WebRequestContext>) {
        router.post(RouterPath(Paths.digest)) { request, context in try await self.change(request, context) }
        router.get(RouterPath(Paths.digestConfirmPath)) { request, _ in await self.askToConfirm(request) }
        router.post(RouterPath(Paths.digestConfirmPath)) { request, _ in await self.confirm(request) }
        router.get(RouterPath(Paths.digestUnsubscribePath)) { request, _ in await self.askToUnsubscribe(request) }
        router.post(RouterPath(Paths.digestUnsubscribePath)) { request, _ in await self.unsubscribe(request) }
    }

    /// Whether `owner` may be sent another confirmation link now.
    func mayConfirmAgain(_ owner: ListOwner) async throws -> Bool {
        try await digests.nextConfirmationAllowed(for: owner) == nil
    }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    func change(_ request: Request, _ context: Context) async throws -> Response {
        let form = try await FormFields.read(request, limit: configuration.maxBodyBytes)
        try CSRFProtection.verify(request, form: form)
        guard let owner = await context.viewer.owner else {
            throw SignInRequired(message: "Sign in with Last.fm to have your weekly digest emailed to you.")
        }
        let store = digests.store, now = digests.clock.now
        do {
            switch form["action"] {
            case "save"?:
                let address = (form["address"] ?? "").trimmingWhitespace()
                guard MailAddress(address) != nil else { return Self.back("bad-address") }
                guard let weekday = form["weekday"].flatMap(Int.init), DigestSubscription.weekdays.contains(weekday),
                      let hour = form["hour"].flatMap(Int.init), DigestSubscription.hours.contains(hour),
                      let years = form["years"].flatMap(Int.init), (1...DigestSubscription.maxYears).contains(years) else {
                    return Self.back("bad-schedule")
                }
                let kept = try await store.subscription(of: owner)
                let sameAddress = kept?.address.lowercased() == address.lowercased()
                let needsLink = !sameAddress || kept?.isConfirmed != true
                if needsLink, try await !mayConfirmAgain(owner) {
                    // No link can go: the address stays as it is (its schedule may change).
                    if let kept, sameAddress {
                        _ = try await store.save(owner, address: kept.address, weekday: weekday, hour: hour, years: years, newToken: Self.newToken(),
                                                 at: now)
                    }
                    return Self.back("too-many")
                }
                let saved = try await store.save(owner, address: address, weekday: weekday, hour: hour, years: years, newToken: Self.newToken(),
                                                 at: now)
                guard saved.isConfirmed else {
                    try await digests.queueConfirmation(of: saved)
                    return Self.back("confirm")
                }
                return Self.back("saved")
            case "again"?:
                guard let saved = try await store.subscription(of: owner) else { return Self.back("no-address") }
                guard !saved.isConfirmed else { return Self.back("saved") }
                guard try await mayConfirmAgain(owner) else { return Self.back("too-many") }
                try await digests.queueConfirmation(of: saved)
                return Self.back("confirm")
            case "now"?:
                guard let saved = try await store.subscription(of: owner) else { return Self.back("no-address") }
                guard saved.isConfirmed else { return Self.back("unconfirmed") }
                try await digests.queueNow(of: saved)
                return Self.back("now")
            case "stop"?:
                try await store.remove(owner, reason: "You turned the digest off.", at: now)
                return Self.back("stopped")
            default:
                return Self.back("unknown")
            }
        } catch {
            logger.error("could not change a digest subscription: \(String(reflecting: error))")
            return pages.response("message", MessagePage.settings(title: "Not changed", heading: "Your weekly digest was not changed",
                                                                  message: "The database could not be changed. Try again in a moment.",
                                                                  section: "digest"), status: .serviceUnavailable)
        }
    }

    static func back(_ outcome: String) -> Response {
        .redirect(to: Paths.settings + "?digest=\(outcome)#digest", type: .normal)
    }

    /// The subscription a link's token names, handed to `found`; the link's
    /// own answers when the token is malformed, names nothing (`missing`),
    /// or the database cannot be read.
    func linked(_ request: Request, missing: () -> Response,
                _ found: (String, DigestSubscription) async -> Response) async -> Response {
        guard let token = Self.token(request) else { return linkNotValid() }
        let subscription: DigestSubscription?
        do {
            subscription = try await digests.store.subscription(token: token)
        } catch {
            return unavailable()
        }
        guard let subscription else { return missing() }
        return await found(token, subscription)
    }

    /// The confirmation link opened: a button, nothing changed yet.
    func askToConfirm(_ request: Request) async -> Response {
        await linked(request, missing: linkNotValid) { token, found in
            guard !found.isConfirmed else {
                return pages.response("message", MessagePage.settings(title: "Digest confirmed", heading: "This address is confirmed already",
                                                                      message: "Weekly digests go to \(found.address).", section: "digest"))
            }
            return linkPage(DigestLinkView(layout: LayoutFields(title: "Confirm your digest", csrf: ""), heading: "Confirm your weekly digest",
                                           message: "Weekly digests of this week, years ago, will go to \(found.address).",
                                           action: Paths.digestConfirm(token: token), button: "Confirm this address"))
        }
    }

    func linkPage(_ view: DigestLinkView) -> Response {
        var response = pages.response("digest-link", view)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    func confirm(_ request: Request) async -> Response {
        guard let token = Self.token(request) else { return linkNotValid() }
        do {
            guard let confirmed = try await digests.store.confirm(token: token, at: digests.clock.now) else { return linkNotValid() }
            digests.wake()
            let zone = await digests.preferences(confirmed.owner).timeZone
            let next = DigestSchedule.nextSlot(weekday: confirmed.weekday, hour: confirmed.hour, in: zone, after: digests.clock.now)
            return pages.response("message", MessagePage.settings(
                title: "Digest confirmed", heading: "Your weekly digest is on",
                message: "The first one goes to \(confirmed.address) on \(Self.day(next, in: zone)). Settings can send one now, change the day, or turn it off.", section: "digest"))
        } catch {
            logger.error("could not confirm a digest address: \(String(reflecting: error))")
            return unavailable()
        }
    }

    /// The unsubscribe link opened: a button, nothing changed yet.
    func askToUnsubscribe(_ request: Request) async -> Response {
        await linked(request, missing: alreadyOff) { token, found in
            linkPage(DigestLinkView(layout: LayoutFields(title: "Unsubscribe", csrf: ""), heading: "Unsubscribe from the weekly digest",
                                    message: "No more weekly digests will go to \(found.address). You can turn them on again on Settings.",
                                    action: Paths.digestUnsubscribe(token: token), button: "Unsubscribe"))
        }
    }

    func unsubscribe(_ request: Request) async -> Response {
        guard let token = Self.token(request) else { return linkNotValid() }
        do {
            guard let found = try await digests.store.subscription(token: token) else { return alreadyOff() }
            try await digests.store.remove(found.owner, reason: "Unsubscribed from the email's link.", at: digests.clock.now)
            return pages.response("message", MessagePage.settings(
                title: "Unsubscribed", heading: "You are unsubscribed",
                message: "No more weekly digests go to \(found.address). Settings can turn them on again.", section: "digest"))
        } catch {
            logger.error("could not unsubscribe: \(String(reflecting: error))")
            return unavailable()
        }
    }

    /// The link's token: 64 hexadecimal characters.
    static func token(_ request: Request) -> String? {
        guard let token = request.uri.queryParameters.get("token"), token.utf8.count == 64, token.allSatisfy(\.isHexDigit) else { return nil }
        return token
    }

    func linkNotValid() -> Response {
        pages.response("message", MessagePage.settings(
            title: "Link not valid", heading: "This link no longer works",
            message: "It may be from an older email: the address was changed or the digest turned off since. Settings shows where it stands.", section: "digest"), status: .notFound)
    }

    func alreadyOff() -> Response {
        pages.response("message", MessagePage.settings(
            title: "Unsubscribed", heading: "Nothing is sent to this address",
            message: "The weekly digest was already turned off, or its address changed. Settings shows where it stands.", section: "digest"))
    }

    func unavailable() -> Response {
        pages.response("message", MessagePage(
            title: "Not now", heading: "That did not work just now", csrf: "",
            message: "The database could not be reached. Open the link again in a moment."), status: .serviceUnavailable)
    }

    /// "Monday 30 November at 08:00".
    static func day(_ date: Date, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = zone
        formatter.dateFormat = "EEEE d MMMM 'at' HH:mm"
        return formatter.string(from: date)
    }
}

/// The page behind an email's link (confirm, unsubscribe): what the
/// button will do, and the button.
struct DigestLinkView {
    var layout: LayoutFields
    let heading: String
    let message: String
    let action: String
    let button: String
}

/// The Settings section of the weekly digest.
struct DigestView {
    struct Option {
        let value: Int
        let label: String
        let selected: Bool
    }

    struct SendView {
        let what: String
        let when: String
        let state: String
        let reason: String?
        let failed: Bool
    }

    let action: String
    /// Why the digest cannot be had here; nil when it can.
    let unavailable: String?
    var address: String = ""
    var weekdays: [Option] = []
    var hours: [Option] = []
    var years: [Option] = []
    /// Where it stands, in a sentence.
    var status: String?
    var confirmed = false
    var waitingForConfirmation = false
    var subscribed = false
    var sends: [SendView] = []
    var changed: String?
    var problem: String?
}

extension SettingsRoutes {
    func digest(of owner: ListOwner, settings: Settings, request: Request) async -> DigestView? {
        guard let digests else {
            return DigestView(action: Paths.digest, unavailable: "This server cannot send email: whoever runs it has not given it a mail server "
                + "(VINYLOGUE_SMTP_URL and VINYLOGUE_MAIL_FROM, as its README says).")
        }
        let subscription = try? await digests.store.subscription(of: owner)
        let weekday = subscription?.weekday ?? 2, hour = subscription?.hour ?? 8, years = subscription?.years ?? 3
        var view = DigestView(action: Paths.digest, unavailable: nil)
        view.address = subscription?.address ?? ""
        view.weekdays = (1...7).map { DigestView.Option(value: $0, label: DigestWriter.weekdayName($0), selected: $0 == weekday) }
        view.hours = (0...23).map { DigestView.Option(value: $0, label: DigestWriter.hourLabel($0), selected: $0 == hour) }
        view.years = (1...DigestSubscription.maxYears).map {
            DigestView.Option(value: $0, label: $0 == 1 ? "1 year" : "\($0) years", selected: $0 == years)
        }
        if let subscription {
            view.subscribed = true
            view.confirmed = subscription.isConfirmed
            view.waitingForConfirmation = !subscription.isConfirmed
            if subscription.isConfirmed {
                let next = DigestSchedule.nextSlot(weekday: subscription.weekday, hour: subscription.hour, in: settings.timeZone,
                                                   after: clock.now)
                view.status = "On: the next one goes to \(subscription.address) on \(DigestSettings.day(next, in: settings.timeZone)) "
                    + "(\(settings.timeZone.identifier)), showing up to \(subscription.years == 1 ? "one year" : "\(subscription.years) years") back."
            } else {
                view.status = "Waiting for you to confirm \(subscription.address): open the link in the email Vinylogue sent there."
            }
        } else {
            view.status = "Off. Give an address to get this week's albums from earlier years by email, each week."
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = settings.timeZone
        formatter.dateFormat = "d MMM, HH:mm"
        view.sends = await digests.sends(of: owner).map { send in
            DigestView.SendView(what: Self.sendLabel(send.kind), when: formatter.string(from: send.sentAt ?? send.dueAt),
                                state: Self.stateLabel(send), reason: send.reason, failed: send.state == .failed)
        }
        view.changed = switch request.uri.queryParameters.get("digest") {
        case "saved"?: "Saved."
        case "confirm"?: "Vinylogue is sending a link to that address: open it to confirm, and the digest starts."
        case "now"?: "This week’s digest is on its way."
        case "stopped"?: "The weekly digest is off."
        default: nil
        }
        view.problem = switch request.uri.queryParameters.get("digest") {
        case "bad-address"?: "That is not an email address Vinylogue can send to: give one like you@example.org."
        case "bad-schedule"?: "Choose a day, an hour and a number of years from the lists."
        case "unconfirmed"?: "Confirm the address first: open the link in the email Vinylogue sent there."
        case "no-address"?: "Give an address first."
        case "unknown"?: "Use one of the buttons."
        default: nil
        }
        if request.uri.queryParameters.get("digest") == "too-many" {
            let next = try? await digests.nextConfirmationAllowed(for: owner)
            view.problem = Self.tooManyLinks(kept: subscription, next: next, in: settings.timeZone)
        }
        return view
    }

    /// Past the links' limit: that none was sent, that the address stays,
    /// and from when (in the person's zone) to ask again.
    static func tooManyLinks(kept: DigestSubscription?, next: Date?, in zone: TimeZone) -> String {
        var sentence = "No link was sent, and the address was not changed: \(WeeklyDigests.confirmationsPerHour) links went out in the last hour."
        if let kept, kept.isConfirmed { sentence += " Digests still go to \(kept.address)." }
        guard let next else { return sentence + " Check the address for typos, and try again." }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = zone
        formatter.dateFormat = "HH:mm"
        // Rounded up to the minute, so that the time said has passed when it shows.
        let minute = (next.timeIntervalSince1970 / 60).rounded(.up) * 60
        return sentence + " Check the address for typos, and try again after \(formatter.string(from: Date(timeIntervalSince1970: minute))) "
            + "(\(zone.identifier))."
    }

    static func sendLabel(_ kind: DigestSend.Kind) -> String {
        switch kind {
        case .weekly: "Weekly digest"
        case .now: "Digest sent on request"
        case .confirmation: "Confirmation link"
        }
    }

    static func stateLabel(_ send: DigestSend) -> String {
        switch send.state {
        case .waiting: send.attempts == 0 ? "waiting" : "will be tried again"
        case .sending: "being sent"
        case .sent: "sent"
        case .skipped: "not sent"
        case .failed: "failed"
        }
    }
}
