import Foundation
import VinylogueCore

/// The rules every received listen follows, whichever protocol brought it
/// (ListenBrainz's `/1/` or Last.fm's `/2.0/`): how a name is cleaned and
/// when it is refused, which times are believable, what a MusicBrainz id
/// looks like. Each protocol says "no" in its own way: `/1/` refuses the
/// whole payload with a sentence, `/2.0/` ignores one scrobble with a code.
package enum ListenFields {
    /// How far past the server's clock a listen may be (players' clocks drift).
    package static let allowedLead: Int64 = 600
    /// The longest artist, track or album name kept.
    package static let maxNameLength = 1000

    /// Why a name cannot be kept.
    package enum NameProblem: Error, Equatable {
        case empty
        case containsNUL
        case tooLong

        /// "must not be empty", … : a sentence's end, after the field's name.
        package var predicate: String {
            switch self {
            case .empty: "must not be empty"
            case .containsNUL: "contains a NUL character"
            case .tooLong: "is longer than \(ListenFields.maxNameLength) characters"
            }
        }
    }

    /// `text` trimmed of surrounding white space, or why it cannot be kept.
    package static func name(_ text: String) -> Result<String, NameProblem> {
        // Swift's own trimming: Foundation's goes through NSString and UTF-16
        // on Linux, a real share of an import's time.
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty { return .failure(.empty) }
        if trimmed.utf8.contains(0) { return .failure(.containsNUL) }
        // No more bytes than the limit is no more characters; else count them.
        if trimmed.utf8.count > maxNameLength, trimmed.count > maxNameLength { return .failure(.tooLong) }
        return .success(trimmed)
    }

    /// Where a listen's time falls against the believable range.
    package enum TimeCheck: Equatable {
        case believable
        /// Before 2002-01-01, when scrobbling began.
        case tooOld
        /// Further in the future than a drifting clock explains.
        case tooNew
    }

    /// The believable times at `now`: from 2002 to a few minutes ahead.
    package static func times(now: Date) -> ClosedRange<Int64> {
        PlausibleTime.earliest...(Int64(now.timeIntervalSince1970) + allowedLead)
    }

    package static func check(_ seconds: Int64, in times: ClosedRange<Int64>) -> TimeCheck {
        if seconds < times.lowerBound { return .tooOld }
        if seconds > times.upperBound { return .tooNew }
        return .believable
    }

    /// Whether `text` is a MusicBrainz id (a UUID in its 36-character form).
    package static func isMBID(_ text: String) -> Bool { text.utf8.count == 36 && UUID(uuidString: text) != nil }
}
