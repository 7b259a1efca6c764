import Foundation
import Stores
import VinylogueCore

/// What a person's pages say while their history is being copied into
/// the archive: how far the copy has come, with figures, and what that
/// means for the page ("Copying rj’s Last.fm history: 41,200 of 152,380
/// scrobbles (27%), about 6 minutes left.").
enum CopyProgressNote {
    /// The sentence for `copy`, nil once it has finished (or was stopped
    /// or failed: those are said on Settings, and the pages chart what the
    /// archive holds). `whose` names the person ("your", "rj’s").
    static func sentence(_ copy: HistoryCopy, whose: String, secondsLeft: TimeInterval?) -> String? {
        guard copy.isUnfinished else { return nil }
        let service = copy.user.service.displayName
        let noun = copy.user.service == .listenBrainz ? "listens" : "scrobbles"
        let what = "\(whose) \(service) history"
        guard copy.state == .copying, copy.pagesDone > 0 else {
            return "Vinylogue is about to copy \(what) into its archive, so that every chart works at once and without \(service)."
        }
        var figures: String
        if copy.scrobblesTotal > 0 {
            let done = min(copy.scrobbles, copy.scrobblesTotal)
            figures = "\(grouped(done)) of \(grouped(copy.scrobblesTotal)) \(noun) (\(percent(done, of: copy.scrobblesTotal)))"
        } else if copy.pagesTotal > 0 {
            figures = "\(grouped(copy.scrobbles)) \(noun), page \(grouped(copy.pagesDone)) of \(grouped(copy.pagesTotal)) "
                + "(\(percent(copy.pagesDone, of: copy.pagesTotal)))"
        } else {
            figures = "\(grouped(copy.scrobbles)) \(noun) so far"
        }
        if let secondsLeft { figures += ", " + timeLeft(secondsLeft) }
        return "Copying \(what): \(figures)."
    }

    /// The line a chart page adds: until the copy is done, its charts come
    /// from the service (`fromLastFM`), or from what the archive held before.
    static func chartNote(_ copy: HistoryCopy?, user: Username, secondsLeft: TimeInterval?, fromLastFM: Bool = true) -> String? {
        guard let copy, let sentence = sentence(copy, whose: possessive(user), secondsLeft: secondsLeft) else { return nil }
        guard user.service == .lastFM else { return sentence }
        return sentence + (fromLastFM ? " Until it is done, these charts come from Last.fm."
            : " Until it is done, earlier years may be missing from these charts.")
    }

    /// What rediscover and album life say instead of asking Last.fm for
    /// years of weekly charts: they are ready when the copy is.
    static func waitNote(_ copy: HistoryCopy, user: Username, secondsLeft: TimeInterval?, what: String) -> String {
        let progress = sentence(copy, whose: possessive(user), secondsLeft: secondsLeft) ?? ""
        return "\(what) will be ready when the copy of \(user.value)’s history is done. \(progress)"
    }

    static func possessive(_ user: Username) -> String { "\(user.value)’s" }

    /// "27%"; "less than 1%" for a start that rounds to nothing.
    static func percent(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "0%" }
        let value = Int((Double(part) * 100 / Double(whole)).rounded(.down))
        return part > 0 && value == 0 ? "less than 1%" : "\(min(100, value))%"
    }

    /// "about 6 minutes left", "less than a minute left", "about 2 hours left".
    static func timeLeft(_ seconds: TimeInterval) -> String {
        if seconds < 60 { return "less than a minute left" }
        let minutes = Int((seconds / 60).rounded())
        if minutes < 90 { return "about \(minutes) minute\(minutes == 1 ? "" : "s") left" }
        let hours = Int((seconds / 3600).rounded())
        return "about \(hours) hours left"
    }

    /// 152380 → "152,380".
    static func grouped(_ n: Int) -> String { AlbumPageView.grouped(n) }
}
