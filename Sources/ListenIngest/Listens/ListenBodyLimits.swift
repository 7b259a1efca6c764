import HTTPServing

/// The body limits of the listen APIs' addresses, and each one's refusal
/// in its own protocol's words, for `EarlyBodyLimit` to answer from a
/// request's head.
package enum ListenBodyLimits {
    package static let routes: [String: BodyLimits.Limit] = {
        let listenBrainz = BodyLimits.Limit(bytes: ListenSubmission.maxBodyBytes) { _ in
            BodyLimits.Refusal(contentType: "application/json; charset=utf-8",
                               body: #"{"code":413,"error":"The payload is larger than \#(ListenSubmission.maxBodyBytes) bytes; "#
                                   + #"send at most 1000 listens at a time."}"#)
        }
        let lastFM = BodyLimits.Limit(bytes: LastFMScrobbleRoutes.maxBodyBytes) { path in
            let sentence = "Invalid parameters: The request is larger than \(LastFMScrobbleRoutes.maxBodyBytes) bytes; "
                + "send at most 50 scrobbles at a time."
            if path.lowercased().contains("format=json") {
                return BodyLimits.Refusal(contentType: "application/json; charset=utf-8", body: #"{"error":6,"message":"\#(sentence)"}"#)
            }
            return BodyLimits.Refusal(contentType: "text/xml; charset=utf-8",
                                      body: #"<?xml version="1.0" encoding="utf-8"?>"# + "\n"
                                          + #"<lfm status="failed"><error code="6">\#(sentence)</error></lfm>"#)
        }
        // 50 tracks of long non-Latin names, percent-encoded, are 20 KB and more.
        let audioscrobbler = BodyLimits.Limit(bytes: AudioscrobblerRoutes.maxBodyBytes) { _ in
            BodyLimits.Refusal(contentType: "text/plain; charset=utf-8",
                               body: "FAILED The request is larger than \(AudioscrobblerRoutes.maxBodyBytes) bytes; send at most 50 tracks at a time\n")
        }
        return ["/1/submit-listens": listenBrainz, "/2.0": lastFM,
                AudioscrobblerRoutes.submitPath: audioscrobbler, AudioscrobblerRoutes.nowPlayingPath: audioscrobbler]
    }()
}
