import Foundation

/// How long pages wait for slow upstream work they can do without.
public struct Patience: Sendable {
    /// For Last.fm's spelling of a name, before serving without a redirect.
    public var nameLookup: Duration
    /// For an album's colours, before serving the page in house colours.
    public var albumColours: Duration

    /// For Last.fm's answers, over a whole request, before a page is
    /// served from saved copies or says Last.fm is slow
    /// (`AnswerDeadline`). Under 10 s with the name lookup's wait.
    public var lastFM: Duration

    /// For the database's answer to `/healthz`, before the instance
    /// says it is unavailable (HTTP 503).
    public var database: Duration

    public init(nameLookup: Duration = .seconds(2), albumColours: Duration = .milliseconds(1500), lastFM: Duration = .seconds(7),
                database: Duration = .seconds(2)) {
        self.nameLookup = nameLookup
        self.albumColours = albumColours
        self.lastFM = lastFM
        self.database = database
    }
}
