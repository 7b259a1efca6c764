import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Where a person's mpd listens, and its password if it has one (never
/// part of a description or a sentence).
public struct MPDAccount: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    let password: String?
    /// The address connections go to, when it was checked for `host`
    /// (`MusicServerPolicy.Decision`); nil: `host` itself.
    public private(set) var pinnedAddress: String?

    /// Nil for an empty host or a port outside 1…65535.
    public init?(host: String, port: Int = 6600, password: String? = nil) {
        let host = host.trimmingCharacters(in: .whitespaces)
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "[" || $0 == "]" }), (1...65535).contains(port) else {
            return nil
        }
        self.host = host
        self.port = port
        self.password = password.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// What a person types for mpd: `host`, `host:port`, `[v6]`,
    /// `[v6]:port` or a bare IPv6 address (6600 unless a port is given).
    public init?(address: String, password: String? = nil) {
        var text = address.trimmingCharacters(in: .whitespaces)
        var port = 6600
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            guard let number = Int(text[text.index(after: colon)...]) else { return nil }
            port = number
            text = String(text[..<colon])
        }
        self.init(host: text, port: port, password: password)
    }

    /// The same account, connecting to `address` whatever `host` resolves to.
    public func pinned(to address: String) -> MPDAccount {
        var pinned = self
        pinned.pinnedAddress = address
        return pinned
    }

    /// "host:port" ("[v6]:port"), as sentences name it.
    public var server: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    public var description: String { "mpd at \(server)" }
}

/// A person's mpd as a `MusicLibrary`, over mpd's own protocol (a line
/// per command, answered by lines ending in `OK` or `ACK …`): albums found
/// with `search album`, stored playlists made with `rm` and `playlistadd`.
/// Each call is a connection of its own, with a deadline and a limit on
/// what is read; the password, when there is one, is sent first.
public final class MPDClient: MusicLibrary {
    public let account: MPDAccount
    /// The songs of the albums the last search found, by album id.
    private let found = Mutex<[String: [LibrarySong]]>([:])

    public static let timeout: Duration = .seconds(15)
    public static let maxBytes = 8 << 20

    public init(account: MPDAccount) {
        self.account = account
    }

    public var server: String { account.server }

    public func ping() async throws(MusicServerError) {
        // A read: mpd with a password for reading refuses it without one.
        _ = try await run(["listplaylists"])
    }

    public func albums(named query: String) async throws(MusicServerError) -> [LibraryAlbum] {
        let records = try await run(["search album \(Self.quoted(query))"]).first ?? []
        var songs: [String: [LibrarySong]] = [:]
        var albums: [LibraryAlbum] = []
        for record in records {
            guard let file = record["file"], let album = record["Album"] else { continue }
            let artist = record["AlbumArtist"] ?? record["Artist"] ?? ""
            let id = artist + "\u{1F}" + album
            if songs[id] == nil { albums.append(LibraryAlbum(id: id, name: album, artist: artist)) }
            songs[id, default: []].append(LibrarySong(id: file, title: record["Title"] ?? "", artist: record["Artist"] ?? artist, album: album,
                                                      disc: Self.number(record["Disc"]) ?? 1, track: Self.number(record["Track"]) ?? 0))
        }
        found.withLock { $0.merge(songs) { _, new in new } }
        return albums
    }

    public func songs(of album: LibraryAlbum) async throws(MusicServerError) -> [LibrarySong] {
        let songs = found.withLock { $0[album.id] } ?? []
        return songs.enumerated().sorted { ($0.element.disc, $0.element.track, $0.offset) < ($1.element.disc, $1.element.track, $1.offset) }
            .map(\.element)
    }

    /// Made under a name of its own first, then put in the old one's
    /// place: a song mpd refuses midway leaves the playlist from before
    /// as it was. Saved under `storedName(name)` (mpd's names are files).
    public func savePlaylist(name: String, songs: [LibrarySong]) async throws(MusicServerError) -> Bool {
        let name = Self.storedName(name), making = name + " (being made)"
        let lists = try await run(["listplaylists"]).first ?? []
        let existed = lists.contains { $0["playlist"] == name }
        // One an earlier attempt left half made goes first.
        var commands = lists.contains { $0["playlist"] == making } ? ["rm \(Self.quoted(making))"] : []
        commands += songs.map { "playlistadd \(Self.quoted(making)) \(Self.quoted($0.id))" }
        do {
            _ = try await run(commands)
        } catch {
            _ = try? await run(["rm \(Self.quoted(making))"])
            throw error
        }
        _ = try await run((existed ? ["rm \(Self.quoted(name))"] : []) + ["rename \(Self.quoted(making)) \(Self.quoted(name))"])
        return existed
    }

    /// `name` as mpd can keep it: a stored playlist is a file, so a "/" (in
    /// an album's name: "Either/Or") becomes "∕", and a line break a space.
    static func storedName(_ name: String) -> String {
        String(name.map { $0 == "/" ? "∕" : ($0.isNewline ? " " : $0) })
    }

    /// "1/12" → 1.
    static func number(_ text: String?) -> Int? {
        text.flatMap { Int($0.split(separator: "/").first ?? "") }
    }

    /// An argument as mpd reads one: in double quotes, `"` and `\` escaped;
    /// a line break (which would end the command) made a space.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\"", "\\": out.append("\\"); out.append(character)
            case "\n", "\r", "\r\n": out.append(" ")
            default: out.append(character)
            }
        }
        return out + "\""
    }

    // MARK: - The wire

    /// Runs `commands` on one connection, in order, and gives each one's
    /// answer as records (a record starts at its first key seen again, or
    /// at `file:` / `playlist:`). An `ACK` stops there with its reason.
    func run(_ commands: [String]) async throws(MusicServerError) -> [[[String: String]]] {
        let server = account.server
        let account = self.account
        let outcome = await Deadline.within(Self.timeout, server: server) { await Self.converse(account, commands) }
        return try outcome.get()
    }

    private static func converse(_ account: MPDAccount, _ commands: [String]) async -> Result<[[[String: String]]], MusicServerError> {
        let server = account.server
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(5))
                .connect(host: account.pinnedAddress ?? account.host, port: account.port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
        } catch {
            return .failure(.unreachable(server))
        }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var lines = LineReader(iterator: inbound.makeAsyncIterator(), limit: maxBytes, server: server)
                guard let greeting = try await lines.next(), greeting.hasPrefix("OK MPD ") else {
                    return .failure(MusicServerError.notSubsonic(server).asMPD)
                }
                var answers: [[[String: String]]] = []
                let all = (account.password.map { ["password \(quoted($0))"] } ?? []) + commands
                for (index, command) in all.enumerated() {
                    try await outbound.write(ByteBuffer(string: command + "\n"))
                    var records: [[String: String]] = []
                    var record: [String: String] = [:]
                    while true {
                        guard let line = try await lines.next() else { return .failure(.unreachable(server)) }
                        if line == "OK" { break }
                        if line.hasPrefix("ACK ") {
                            // A wrong password, or none where mpd wants one ("ACK [4@0] … permission").
                            if account.password != nil, index == 0 { return .failure(.wrongPassword(server)) }
                            if line.contains("[4@") { return .failure(.wrongPassword(server)) }
                            // "ACK [50@0] {rm} No such playlist": the reason after the command's name.
                            let reason = line.split(separator: "}", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? line
                            return .failure(.refused(server, reason: SubsonicClient.sentence(reason)))
                        }
                        guard let colon = line.range(of: ": ") else { continue }
                        let key = String(line[..<colon.lowerBound]), value = String(line[colon.upperBound...])
                        if record[key] != nil || ((key == "file" || key == "playlist") && !record.isEmpty) {
                            records.append(record)
                            record = [:]
                        }
                        record[key] = value
                    }
                    if !record.isEmpty { records.append(record) }
                    if account.password == nil || index > 0 { answers.append(records) }
                }
                return .success(answers)
            }
        } catch let error as MusicServerError {
            return .failure(error)
        } catch {
            return .failure(.unreachable(server))
        }
    }

    /// Lines from a channel's bytes (`\n`-ended), at most `limit` bytes in all.
    struct LineReader {
        var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        let limit: Int
        let server: String
        var pending = ByteBuffer()
        var read = 0
        /// How far `pending` is known to hold no line end.
        var searched = 0

        init(iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, limit: Int, server: String) {
            self.iterator = iterator
            self.limit = limit
            self.server = server
        }

        mutating func next() async throws -> String? {
            while true {
                let view = pending.readableBytesView
                if let newline = view[(view.startIndex + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                    let length = newline - pending.readerIndex
                    let line = pending.readString(length: length) ?? ""
                    pending.moveReaderIndex(forwardBy: 1)
                    searched = 0
                    return line.hasSuffix("\r") ? String(line.dropLast()) : line
                }
                searched = view.count
                guard var chunk = try await iterator.next() else { return nil }
                read += chunk.readableBytes
                if read > limit { throw MusicServerError.tooLarge(server) }
                pending.writeBuffer(&chunk)
            }
        }
    }
}

extension MusicServerError {
    /// The same failure, said of an mpd rather than a Subsonic server.
    var asMPD: MusicServerError {
        if case .notSubsonic(let server) = self { return .notMPD(server) }
        return self
    }
}
