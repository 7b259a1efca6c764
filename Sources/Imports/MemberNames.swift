import Foundation

/// What the names of files inside an export say: which are not listening
/// history, and the order to read them in.
enum MemberNames {
    /// Why a member is not listening history, judged by its name alone, or
    /// `nil` when its content decides.
    static func notHistory(_ path: String) -> String? {
        let base = (path as NSString).lastPathComponent
        let lowered = base.lowercased()
        if path.hasPrefix("__MACOSX/") || path.contains("/__MACOSX/") || base.hasPrefix("._") {
            return "macOS file metadata, not listening history"
        }
        if lowered == "user.json" { return "ListenBrainz account details, not listening history" }
        if path.lowercased().hasPrefix("vinylogue/") { return "Vinylogue's list and settings, not listening history" }
        if lowered == "feedback.jsonl" || lowered == "feedback.json" {
            return "ListenBrainz loved and hated tracks, not listening history"
        }
        if lowered.hasPrefix("streaming_history_video") { return "Spotify video history, not music" }
        if lowered.hasPrefix("streaminghistory_podcast") { return "Spotify podcast history, not music" }
        if lowered.hasSuffix(".pdf") || lowered.hasSuffix(".html") || lowered.hasSuffix(".htm") {
            return "a document, not listening history"
        }
        return nil
    }

    /// Natural order: digit runs compare as numbers, so month 2 comes
    /// before month 10 and `Streaming_History_Audio_2019_2.json` before `..._10.json`.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: [.numeric, .caseInsensitive]) == .orderedAscending
    }
}
