import Foundation
import Stores
import VinylogueCore

/// Everything a person keeps here, as one ZIP they take with them:
///
/// - `listens/YYYY/M.jsonl`: their archived listens in ListenBrainz's
///   export layout (one listen per line, a file per month, UTC), which
///   ListenBrainz and `vinylogue import` read back;
/// - `user.json`: whose export it is and when it was made (as in
///   ListenBrainz's exports);
/// - `vinylogue/list.json`, `vinylogue/settings.json`,
///   `vinylogue/forwarding.json`: their list in its order, their settings,
///   and where their listens are forwarded;
/// - `vinylogue/albums.json`: how their albums group (`AlbumChoices`),
///   which `vinylogue import` of the ZIP brings back.
///
/// Secrets stay out: no listen token, session key or ListenBrainz token is
/// written (forwarding says only whether and to whom). The archive is read
/// a month at a time and each piece is handed to `send` as soon as it is
/// deflated (`StreamingZIP`), so the ZIP is never whole in memory.
public struct PersonalExport: Sendable {
    /// The person whose listens are exported (nil: none, such as a
    /// household without "me"), and whose list, settings and forwarding.
    public let person: Username?
    public let owner: ListOwner
    public let archive: any ScrobbleArchive
    public let list: any ListStore
    public let forwarding: (any ForwardingOutbox)?
    public let clock: WallClock
    /// Who may see the account's listening, written with the settings
    /// (nil: not an account's export).
    public var visibility: Visibility?
    /// The weekly digest's address and schedule, written with the settings
    /// (nil: none; its link token is not written).
    public var digest: DigestSubscription?

    public init(person: Username?, owner: ListOwner, archive: any ScrobbleArchive, list: any ListStore,
                forwarding: (any ForwardingOutbox)?, clock: WallClock) {
        self.person = person
        self.owner = owner
        self.archive = archive
        self.list = list.owned(by: owner)
        self.forwarding = forwarding
        self.clock = clock
    }

    /// `,"weekly_digest":{…}`: where and when it goes (no token).
    static func digestJSON(_ digest: DigestSubscription) -> String {
        ",\"weekly_digest\":{\"address\":\(JSONText.string(digest.address)),\"weekday\":\(digest.weekday),\"hour\":\(digest.hour),"
            + "\"years\":\(digest.years),\"confirmed\":\(digest.isConfirmed)}"
    }

    /// The file name a download of it suggests: `vinylogue-RJ-2026-11-26.zip`.
    public var fileName: String {
        let parts = Self.utc.dateComponents([.year, .month, .day], from: clock.now)
        let day = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        let who = person.map { "-" + $0.value.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } } ?? ""
        return "vinylogue\(who)-\(day).zip"
    }

    /// What was written: listens and months.
    public struct Summary: Sendable, Equatable {
        public let listens: Int
        public let months: Int
    }

    /// Writes the ZIP, handing each piece to `send` in order.
    @discardableResult
    public func write(to send: ([UInt8]) async throws -> Void) async throws -> Summary {
        let zip = StreamingZIP(modified: clock.now)
        let exported = ISO8601DateFormatter().string(from: clock.now)
        try await send(try zip.begin("user.json"))
        try await send(try zip.add("{\"user_name\":\(JSONText.string(person?.value ?? "")),\"exported_by\":\"Vinylogue\","
                                   + "\"exported_at\":\(JSONText.string(exported))}\n"))
        var listens = 0, months = 0
        if let person, let span = try await archive.span(for: person) {
            var month = Self.month(containing: span.lowerBound)
            while month.from <= span.upperBound {
                let scrobbles = try await archive.scrobbles(of: person, from: month.from, to: month.to)
                if !scrobbles.isEmpty {
                    try await send(try zip.begin("listens/\(month.year)/\(month.number).jsonl"))
                    // A few hundred lines a piece: small writes, few of them.
                    for chunk in stride(from: 0, to: scrobbles.count, by: 256) {
                        var text = ""
                        for scrobble in scrobbles[chunk..<min(chunk + 256, scrobbles.count)] { text += Self.line(scrobble) }
                        try await send(try zip.add(text))
                    }
                    listens += scrobbles.count
                    months += 1
                }
                month = Self.month(containing: month.to)
            }
        }
        try await send(try zip.begin("vinylogue/list.json"))
        let people = try await list.users()
        try await send(try zip.add("[" + people.map { "{\"name\":\(JSONText.string($0.name)),\"me\":\($0.isMe)}" }.joined(separator: ",") + "]\n"))
        let settings = try await list.settings()
        try await send(try zip.begin("vinylogue/settings.json"))
        var written = "{\"play_count_filter\":\(settings.filter.threshold),\"time_zone\":"
        written += settings.timeZoneIdentifier.map(JSONText.string) ?? "null"
        if let visibility { written += ",\"visibility\":" + JSONText.string(visibility.rawValue) }
        if let digest { written += Self.digestJSON(digest) }
        try await send(try zip.add(written + "}\n"))
        if let person {
            let folding = try await archive.albumFolding(of: person)
            try await send(try zip.begin(AlbumFoldingMember.path))
            try await send(try zip.add(AlbumFoldingMember.json(folding, choices: try await archive.albumChoices(of: person))))
        }
        if let forwarding {
            let choice = try await forwarding.choice(of: owner)
            try await send(try zip.begin("vinylogue/forwarding.json"))
            try await send(try zip.add("{\"to_lastfm\":\(choice.toLastFM),\"to_listenbrainz\":\(choice.listenBrainzToken != nil),"
                                       + "\"listenbrainz_user\":\(choice.listenBrainzUser.map(JSONText.string) ?? "null")}\n"))
        }
        try await send(try zip.finish())
        return Summary(listens: listens, months: months)
    }

    /// One listen as a line of ListenBrainz's export.
    static func line(_ s: Scrobble) -> String {
        var metadata = "\"artist_name\":\(JSONText.string(s.artist)),\"track_name\":\(JSONText.string(s.track))"
        if !s.album.isEmpty { metadata += ",\"release_name\":\(JSONText.string(s.album))" }
        var info: [String] = []
        if let id = s.artistMBID { info.append("\"artist_mbids\":[\(JSONText.string(id))]") }
        if let id = s.albumMBID { info.append("\"release_mbid\":\(JSONText.string(id))") }
        if let id = s.trackMBID { info.append("\"recording_mbid\":\(JSONText.string(id))") }
        if let name = s.albumArtist { info.append("\"release_artist_name\":\(JSONText.string(name))") }
        if let id = s.releaseGroupMBID { info.append("\"release_group_mbid\":\(JSONText.string(id))") }
        if !info.isEmpty { metadata += ",\"additional_info\":{" + info.joined(separator: ",") + "}" }
        return "{\"listened_at\":\(s.instant),\"track_metadata\":{\(metadata)}}\n"
    }

    /// A calendar month in UTC: `[from, to)` in seconds since 1970.
    struct Month {
        let year: Int, number: Int, from: Int64, to: Int64
    }

    static func month(containing instant: Int64) -> Month {
        let date = Date(timeIntervalSince1970: TimeInterval(instant))
        let parts = utc.dateComponents([.year, .month], from: date)
        let start = utc.date(from: parts)!
        let end = utc.date(byAdding: .month, value: 1, to: start)!
        return Month(year: parts.year!, number: parts.month!, from: Int64(start.timeIntervalSince1970), to: Int64(end.timeIntervalSince1970))
    }

    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
