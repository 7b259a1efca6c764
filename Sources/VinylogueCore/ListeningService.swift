/// The services a listener's history can come from. A `Username` knows
/// its own (`lb:` before the name means ListenBrainz).
public enum ListeningService: String, Sendable, Hashable, Codable, CaseIterable {
    case lastFM = "lastfm"
    case listenBrainz = "listenbrainz"

    /// The service's name, as a sentence says it.
    public var displayName: String {
        switch self {
        case .lastFM: "Last.fm"
        case .listenBrainz: "ListenBrainz"
        }
    }
}
