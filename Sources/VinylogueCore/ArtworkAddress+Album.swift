extension ArtworkAddress {
    /// The cover pages show for `detail`: Last.fm's 300 px image, else its
    /// largest, when its URL is a Last.fm image address (anything else is
    /// refused, as every image URL from outside is). Nil when the album has
    /// no usable image.
    public init?(coverOf detail: AlbumDetail) {
        let candidates = [detail.images[.extralarge], detail.images[.mega], detail.largestImage].compactMap { $0 }
        guard let address = candidates.lazy.compactMap({ ArtworkAddress(lastFMURL: $0) }).first else { return nil }
        self = address
    }
}
