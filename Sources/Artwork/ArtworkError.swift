/// Why an image could not be served. Each case reads as a sentence.
public enum ArtworkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Last.fm has no such image, or a demo cover was never registered.
    case notFound
    /// Last.fm answered with another non-success status.
    case upstreamStatus(Int)
    /// Last.fm answered 2xx but the body is not an image (an HTML error page...).
    case notAnImage
    /// The image is bigger than we are willing to download.
    case tooLarge
    /// The request did not complete: timeout, DNS, connection refused...
    case unreachable(String)
    /// A generated cover could not be encoded.
    case encodingFailed
    /// The image could not be written to the data directory.
    case notStored(String)

    public var description: String {
        switch self {
        case .notFound: "That album art does not exist."
        case .upstreamStatus(let status): "Last.fm answered \(status) for the album art; try again later."
        case .notAnImage: "Last.fm sent something that is not an image; try again later."
        case .tooLarge: "The album art is too large to show."
        case .unreachable(let detail): "Could not reach Last.fm for the album art (\(detail)); check the connection."
        case .encodingFailed: "The demo cover could not be drawn."
        case .notStored(let detail): "The album art could not be written to disk (\(detail)); check the data directory's free space and permissions."
        }
    }
}
