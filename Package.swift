// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Vinylogue",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vinylogue", targets: ["vinylogue"]),
        .library(name: "VinylogueCore", targets: ["VinylogueCore"]),
        .library(name: "LastFM", targets: ["LastFM"]),
        .library(name: "ListenBrainz", targets: ["ListenBrainz"]),
        .library(name: "Stores", targets: ["Stores"]),
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .library(name: "Imports", targets: ["Imports"]),
        .library(name: "Sync", targets: ["Sync"]),
        .library(name: "Artwork", targets: ["Artwork"]),
        .library(name: "HTTPServing", targets: ["HTTPServing"]),
        .library(name: "ListenIngest", targets: ["ListenIngest"]),
        .library(name: "Web", targets: ["Web"]),
        .library(name: "PostgresStore", targets: ["PostgresStore"]),
        .library(name: "Mail", targets: ["Mail"]),
        .library(name: "Workers", targets: ["Workers"]),
        .library(name: "MusicServers", targets: ["MusicServers"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // MD5 for Last.fm's request signatures, SHA-256 for session digests.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
        // NIOHTTPTypes: the request parts a channel handler sees (the early 413).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Exports uploaded on Settings, parsed as they stream in.
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        // `/metrics`: swift-metrics' types, emitted in Prometheus's format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // TLS for the SMTP client (STARTTLS, smtps); async-http-client uses it too.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // Values, week arithmetic, chart computation, presenters. Foundation only.
        .target(name: "VinylogueCore"),
        // The Last.fm API 2.0 gateway.
        .target(
            name: "LastFM",
            dependencies: [
                "VinylogueCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The ListenBrainz API gateway: public listens for syncs, submissions for forwarding.
        .target(
            name: "ListenBrainz",
            dependencies: [
                "VinylogueCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // People's own music servers: the Subsonic API's playlists (issue 41).
        .target(
            name: "MusicServers",
            dependencies: [
                "VinylogueCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Email: MIME messages and a small SMTP client (STARTTLS, implicit
        // TLS, AUTH PLAIN/LOGIN) over SwiftNIO, for the weekly digest.
        .target(
            name: "Mail",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What every store is, whichever database holds it: the protocols,
        // the values they keep, and the pure planners both backends carry out.
        .target(name: "Stores", dependencies: ["VinylogueCore"]),
        // Every store in SQLite (GRDB): one file per data directory, for a
        // home or one instance.
        .target(
            name: "SQLiteStore",
            dependencies: [
                // LastFM for the response cache it keeps (`LastFMResponseCache`).
                "VinylogueCore", "Stores", "LastFM",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Listening history from services: history copies (Last.fm,
        // ListenBrainz), the chart source over the archive, which source
        // answers for whom, and the archive's cover fetch.
        .target(name: "Sync", dependencies: ["VinylogueCore", "Stores", "Artwork"]),
        // Listening history from files: every export format, ZIPs read
        // member by member, into any `ScrobbleArchive`.
        .target(
            name: "Imports",
            dependencies: [
                "VinylogueCore", "Stores",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        // Every job that outlives a request: the one job queue's runner and
        // a handler per kind of job.
        .target(
            name: "Workers",
            dependencies: [
                // Mail, LastFM and ListenBrainz: the digest's sender and the
                // forwarder's two upstreams; MusicServers: the weekly playlist's.
                "VinylogueCore", "Stores", "Imports", "Sync", "Mail", "LastFM", "ListenBrainz", "MusicServers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The same stores in PostgreSQL, for several instances on one database.
        .target(
            name: "PostgresStore",
            dependencies: [
                // A peer of the SQLite store, not a client of it: no GRDB.
                "VinylogueCore", "Stores", "LastFM", "Artwork",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // zlib's deflate and CRC-32, for the ZIPs Vinylogue writes.
        .target(
            name: "CDeflate",
            linkerSettings: [.linkedLibrary("z")]
        ),
        // What a person takes with them: their archive, list and settings
        // as a ZIP in ListenBrainz's export layout, streamed as it is made.
        .target(name: "Exports", dependencies: ["VinylogueCore", "Stores", "CDeflate"]),
        // libjpeg / libpng behind a small C layer: libjpeg reports errors by
        // exit() or longjmp, which Swift cannot catch, so C turns them into codes.
        .target(
            name: "CImageCodecs",
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16")]
        ),
        // Album art: fetch, disk cache, JPEG/PNG decoding, colour extraction.
        .target(
            name: "Artwork",
            dependencies: [
                "VinylogueCore", "CImageCodecs",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The web app: Hummingbird routes, Mustache templates, static assets.
        // What both HTTP faces (the pages, the listen APIs) share: the
        // server's configuration and TLS, the early body limit, form
        // fields, the site password, client addresses, CSRF tokens.
        .target(
            name: "HTTPServing",
            dependencies: [
                "VinylogueCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // Listens in: ListenBrainz's `/1/`, Last.fm's `/2.0/` (scrobbling
        // and the read API over the archive), Audioscrobbler 1.2; tokens,
        // the mobile sign-in, now playing, and the forwarding jobs a write
        // queues. Nothing of the pages.
        .target(
            name: "ListenIngest",
            dependencies: [
                "VinylogueCore", "Stores", "Sync", "Workers", "HTTPServing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The pages: charts, albums, settings, sign-in, feeds, cards, the
        // widget; it mounts ListenIngest's routes in the one application.
        .target(
            name: "Web",
            dependencies: [
                // No SQLite module: the web app never names a store's backend.
                "VinylogueCore", "LastFM", "ListenBrainz", "Stores", "Sync", "Imports", "Exports", "Artwork", "Mail", "Workers",
                "HTTPServing", "ListenIngest", "MusicServers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // `serve --tls-certificate --tls-key`: HTTPS without a proxy.
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // The HTTP decoder's error for a body cut off before its length.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            resources: [.copy("Templates"), .copy("Public")]
        ),
        // What the local stand-ins for outside services share.
        .target(
            name: "LocalTestServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // A Last.fm-compatible HTTP server for tests and offline demos.
        .target(
            name: "LastFMTestServer",
            dependencies: [
                // LastFM and Artwork for the in-process transports.
                "VinylogueCore", "Artwork", "LastFM", "LocalTestServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .executableTarget(
            name: "fake-lastfm",
            dependencies: [
                "LastFMTestServer", "VinylogueCore",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // A ListenBrainz-compatible HTTP server for tests and offline demos.
        .target(
            name: "ListenBrainzTestServer",
            dependencies: [
                // ListenBrainz for the in-process transport.
                "VinylogueCore", "ListenBrainz", "LocalTestServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "fake-listenbrainz",
            dependencies: ["ListenBrainzTestServer", "VinylogueCore"]
        ),
        // The upstream economy of a fleet: Last.fm requests per 1,000 views.
        .executableTarget(
            name: "fleet-bench",
            dependencies: [
                "VinylogueApp", "Web", "LastFMTestServer", "PostgresStore", "LastFM", "VinylogueCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        // Hummingbird's hello-world with a body of a given size: the
        // ceiling `scripts/bench-web` measures a warm page against.
        .executableTarget(
            name: "web-ceiling",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
        // Listens per second accepted by a running server's `/1/submit-listens`.
        .executableTarget(
            name: "ingest-bench",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The composition root: configuration read once, the object graph,
        // the web app. The command line and the route tests build through it.
        .target(
            name: "VinylogueApp",
            dependencies: [
                "VinylogueCore", "LastFM", "ListenBrainz", "Stores", "SQLiteStore", "Sync", "Imports", "Artwork", "Web", "PostgresStore",
                "Mail", "Workers", "HTTPServing", "ListenIngest", "MusicServers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command line: commands and terminal views.
        .target(
            name: "VinylogueCLI",
            dependencies: [
                "VinylogueCore", "LastFM", "ListenBrainz", "Stores", "SQLiteStore", "Sync", "Imports", "Exports", "Artwork", "VinylogueApp",
                // HTTPServing for `serve`'s TLS options; never Web: the
                // composition root (VinylogueApp) builds the web app.
                "PostgresStore", "Workers", "HTTPServing", "MusicServers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(name: "vinylogue", dependencies: ["VinylogueCLI"]),
        // What several test targets share: the PostgreSQL cluster's address.
        .target(name: "TestSupport", dependencies: ["VinylogueCore", "MusicServers", .product(name: "Crypto", package: "swift-crypto")],
                path: "Tests/TestSupport"),
        .testTarget(
            name: "MusicServersTests",
            dependencies: ["MusicServers", "VinylogueCore", "TestSupport", "LocalTestServer",
                           .product(name: "Hummingbird", package: "hummingbird"), .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "VinylogueCoreTests",
            dependencies: [
                "VinylogueCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "LastFMTests",
            // Artwork for the fake's image host in process.
            dependencies: ["LastFM", "LastFMTestServer", "VinylogueCore", "Artwork", .product(name: "AsyncHTTPClient", package: "async-http-client")]
        ),
        .testTarget(
            name: "ListenBrainzTests",
            dependencies: [
                "ListenBrainz", "ListenBrainzTestServer", "VinylogueCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "MailTests",
            dependencies: [
                "Mail", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The fake server's STARTTLS.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "ArtworkTests", dependencies: ["Artwork", "VinylogueCore", .product(name: "NIOPosix", package: "swift-nio")]),
        .testTarget(
            name: "WebTests",
            dependencies: [
                "TestSupport",
                "Web", "VinylogueApp", "LastFMTestServer", "ListenBrainzTestServer", "LastFM", "ListenBrainz", "Stores", "SQLiteStore", "Sync",
                "Artwork", "VinylogueCore", "PostgresStore", "Mail", "Workers", "HTTPServing", "ListenIngest",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // One contract for every store, run against SQLite and PostgreSQL.
        .testTarget(
            name: "StoreContractTests",
            dependencies: [
                "TestSupport",
                "Stores", "SQLiteStore", "Sync", "Imports", "Artwork", "PostgresStore", "LastFM", "VinylogueCore", "ListenBrainz", "ListenBrainzTestServer", "Workers",
                "MusicServers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "VinylogueCLITests",
            dependencies: [
                "TestSupport",
                "VinylogueCLI", "LastFMTestServer", "ListenBrainzTestServer", "VinylogueCore", "Stores", "SQLiteStore", "Sync", "Artwork", "PostgresStore", "vinylogue",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        .testTarget(
            name: "ArchiveTests",
            dependencies: [
                "TestSupport",
                "Stores", "SQLiteStore", "Sync", "Imports", "Exports", "Artwork", "VinylogueCore", "LastFM", "LastFMTestServer", "PostgresStore",
                "Workers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        // Tests that run the built executables as child processes: kills,
        // crashes, shutdowns, a fleet of instances, hostile command lines.
        .testTarget(
            name: "ProcessTests",
            dependencies: [
                "TestSupport",
                "Stores", "SQLiteStore", "Sync", "Imports", "VinylogueCore", "PostgresStore", "vinylogue", "fake-lastfm", "fake-listenbrainz",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ]
)
