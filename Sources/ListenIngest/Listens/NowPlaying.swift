import Sync
import Foundation
import Synchronization
import VinylogueCore

/// What each archive user's player said is playing now (`playing_now`
/// submissions), kept in memory only, until the track should have ended
/// (its duration, else 10 minutes) or the next one replaces it. Never
/// stored as a scrobble: a player submits the listen itself when it counts.
package final class NowPlaying: Sendable {
    package struct Track: Sendable, Equatable {
        package let artist: String
        package let track: String
        package let album: String
        package let until: Date

        package init(artist: String, track: String, album: String, until: Date) {
            self.artist = artist
            self.track = track
            self.album = album
            self.until = until
        }
    }

    private let playing = Mutex([String: Track]())
    /// How many tracks are held (live or not yet dropped): with none, a
    /// page asks no lock.
    private let held = Atomic<Int>(0)

    /// Whether no player has said it is playing anything.
    package var isIdle: Bool { held.load(ordering: .acquiring) == 0 }
    private let clock: WallClock
    /// How long a track without a duration counts as playing.
    package static let defaultLength: TimeInterval = 600

    package init(clock: WallClock) { self.clock = clock }

    /// `scrobble` is playing for `user` from now, for `seconds` when known;
    /// returns the track as kept (for the other instances of a fleet).
    @discardableResult
    package func started(_ scrobble: Scrobble, seconds: Int64?, for user: Username) -> Track {
        let length = seconds.map { TimeInterval(min($0, 6 * 3600)) } ?? Self.defaultLength
        let track = Track(artist: scrobble.artist, track: scrobble.track, album: scrobble.album, until: clock.now.addingTimeInterval(length))
        heard(track, for: user)
        return track
    }

    /// `track` is playing for `user` (as another instance of a fleet heard it).
    package func heard(_ track: Track, for user: Username) {
        playing.withLock { playing in
            // Drop the ones that ended, so the map holds only live tracks.
            let now = clock.now
            if playing.count > 1000 { playing = playing.filter { $0.value.until > now } }
            playing[user.key] = track
            held.store(playing.count, ordering: .releasing)
        }
    }

    /// What `user` is playing now, if anything (nothing for a person
    /// `concealment` conceals: the chart page of a person hidden from its
    /// viewer).
    package func track(of user: Username, concealing concealment: Concealment = .nobody) -> Track? {
        if isIdle || concealment.conceals(user) { return nil }
        let now = clock.now
        return playing.withLock { playing in
            guard let track = playing[user.key] else { return nil }
            if track.until <= now {
                playing[user.key] = nil
                held.store(playing.count, ordering: .releasing)
                return nil
            }
            return track
        }
    }
}
