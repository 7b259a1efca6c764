import Foundation
import VinylogueCore

/// What the fake sends back for one request.
public struct FakeReply: Sendable {
    public let status: Int
    public let contentType: String
    public let body: Data
    /// Wait this long before answering.
    public let delay: Duration

    static func json(_ value: some Encodable, status: Int = 200) -> FakeReply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data()
        return FakeReply(status: status, contentType: "application/json", body: data, delay: .zero)
    }

    static func raw(_ data: Data, status: Int = 200) -> FakeReply {
        FakeReply(status: status, contentType: "application/json", body: data, delay: .zero)
    }

    /// Last.fm's error body.
    static func error(_ code: Int, _ message: String, status: Int = 200) -> FakeReply {
        json(Wire.Failure(error: code, message: message), status: status)
    }

    func delayed(by d: Duration) -> FakeReply {
        FakeReply(status: status, contentType: contentType, body: body, delay: delay + d)
    }
}

extension FakeLastFM {
    static let errorMessages: [Int: String] = [
        6: "User not found", 8: "Operation failed - Most likely the backend service failed. Please try again.",
        10: "Invalid API key - You must be granted a valid key by last.fm", 11: "Service Offline - This service is temporarily offline. Try again later.",
        16: "There was a temporary error processing your request. Please try again", 17: "Login: User required to be logged in",
        26: "Suspended API key - Access for your account has been suspended, please contact Last.fm", 29: "Rate limit exceeded - Your IP has made too many requests in a short period",
    ]

    /// Answers one API request, faults included.
    public func answer(_ parameters: [String: String]) async -> FakeReply {
        let method = parameters["method"] ?? ""
        let (index, fault) = begin(method: method, parameters: parameters)
        defer { end(index) }
        // A call refused outright (an error code, a bare HTTP status) does
        // nothing; any other fault comes after the work is done, as a slow
        // or garbled answer from a Last.fm that did its part.
        var reply: FakeReply
        switch fault {
        case .apiError?, .httpStatus?: reply = .raw(Data())
        default: reply = honest(method: method, parameters)
        }
        switch fault {
        case nil: break
        case .apiError(let code, let status):
            reply = .error(code, Self.errorMessages[code] ?? "Error \(code)", status: status)
        case .httpStatus(let status):
            reply = FakeReply(status: status, contentType: "text/html", body: Data("<html><body><h1>\(status)</h1></body></html>".utf8), delay: .zero)
        case .delay(let ms):
            reply = reply.delayed(by: .milliseconds(ms))
        case .held:
            await hold()
        case .truncated:
            reply = .raw(reply.body.prefix(max(1, reply.body.count / 2)))
        case .malformed:
            reply = .raw(Data("<lfm status=\"ok\">not json".utf8))
        case .wrongShape:
            reply = .json(Wire.Unexpected())
        case .oversized(let bytes):
            reply = .raw(Data("{\"padding\":\"".utf8) + Data(repeating: UInt8(ascii: "x"), count: bytes) + Data("\"}".utf8))
        }
        if reply.delay > .zero { try? await Task.sleep(for: reply.delay) }
        return reply
    }

    /// The answer without faults.
    func honest(method: String, _ p: [String: String]) -> FakeReply {
        // Last.fm reads method names without regard to case.
        let method = method.lowercased()
        guard p["api_key"] == apiKey else { return .error(10, Self.errorMessages[10]!, status: 403) }
        guard p["format"] == "json" else { return .error(6, "Only format=json is served by this fake") }
        if method == "album.getinfo" { return albumInfo(p) }
        if method == "auth.gettoken" { return .json(Wire.Token(token: issueToken(approvedFor: nil))) }
        if method == "auth.getsession" { return session(p) }
        if method == "track.scrobble" { return scrobble(p) }
        if method == "track.updatenowplaying" { return updateNowPlaying(p) }
        guard let (name, account) = account(p["user"]) else {
            return .error(6, "User not found", status: 404)
        }
        switch account {
        case .privateProfile:
            return method == "user.getinfo" ? .json(Wire.UserInfo(user: Wire.User(name: name, playcount: 0, registered: 1_200_000_000)))
                : .error(17, Self.errorMessages[17]!, status: 403)
        case .fixtures:
            return fixtureAnswer(method: method, p)
        case .generated(let history):
            return generatedAnswer(method: method, p, name: name, history: history)
        case .scripted(let weeks, let albums):
            return scriptedAnswer(method: method, p, name: name, weeks: weeks, albums: albums)
        }
    }

    func fixtureAnswer(method: String, _ p: [String: String]) -> FakeReply {
        switch method {
        case "user.getinfo": return .raw(fixtures.userInfo)
        case "user.getfriends": return .raw(fixtures.friends)
        case "user.getweeklychartlist": return .raw(fixtures.chartList)
        case "user.getweeklyalbumchart" where p["from"] == String(Fixtures.albumChartWeek.from) && p["to"] == String(Fixtures.albumChartWeek.to):
            return .raw(fixtures.albumChart)
        case "user.getweeklyalbumchart", "user.getweeklyartistchart", "user.getweeklytrackchart":
            return emptyChart(method: method, p, user: "ybsc")
        case "user.getrecenttracks":
            return .json(Wire.RecentTracks(recenttracks: .init(
                track: [], attributes: .init(user: "ybsc", page: "1", perPage: "200", totalPages: "0", total: "0"))))
        default: return .error(3, "Invalid Method - No method with that name in this package", status: 400)
        }
    }

    func emptyChart(method: String, _ p: [String: String], user: String) -> FakeReply {
        let kind = String(method.dropFirst("user.getweekly".count).dropLast("chart".count))
        return .json(Wire.WeeklyChart(kind: kind, rows: .init([]), attributes: .init(user: user, from: p["from"] ?? "", to: p["to"] ?? "")))
    }

    func chartList(_ weeks: [ChartWeek], user: String) -> FakeReply {
        .json(Wire.ChartList(weeklychartlist: .init(
            chart: weeks.map { .init(from: String($0.from), to: String($0.to)) }, attributes: .init(user: user))))
    }
}

extension FakeLastFM {
    func scriptedAnswer(method: String, _ p: [String: String], name: String, weeks: [ChartWeek], albums: [ChartEntry]) -> FakeReply {
        switch method {
        case "user.getinfo":
            return .json(Wire.UserInfo(user: Wire.User(name: name, playcount: albums.reduce(0) { $0 + $1.plays }, registered: weeks.first?.from ?? 0)))
        case "user.getweeklychartlist":
            return chartList(weeks, user: name)
        case "user.getweeklyalbumchart":
            let rows = albums.map { e in
                Wire.ChartRow(attributes: .init(rank: String(e.rank)), playcount: String(e.plays), mbid: e.mbid ?? "", name: e.name,
                              url: e.url ?? "", artist: .init(text: e.artist))
            }
            // Always a list here (the generated users cover the one-row object).
            return .json(Wire.WeeklyChart(kind: "album", rows: .init(rows, bareWhenSingle: false),
                                          attributes: .init(user: name, from: p["from"] ?? "", to: p["to"] ?? "")))
        case "user.getfriends":
            return .json(Wire.Friends(friends: .init(user: .init([]), attributes: .init(user: name, page: "1", totalPages: "0", total: "0"))))
        default:
            return emptyChart(method: method, p, user: name)
        }
    }
}
