import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import SQLiteStore
import Stores
import TestSupport
import Testing
import VinylogueCore
import ZIPFoundation

/// Exports uploaded on Settings: streamed to disk, imported in the
/// background into the viewer's own archive, with the importer's summary
/// on Settings; and every hostile upload a sentence with nothing stored.
@Suite struct ExportUploadTests {
    static let boundary = "----vinylogue-test-boundary"

    /// A multipart body: the CSRF token, then the file.
    static func body(token: String, fileName: String, contents: Data, closed: Bool = true) -> ByteBuffer {
        var text = Data()
        text.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(token)\r\n".utf8))
        text.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\n".utf8))
        text.append(Data("Content-Type: application/octet-stream\r\n\r\n".utf8))
        text.append(contents)
        if closed { text.append(Data("\r\n--\(boundary)--\r\n".utf8)) }
        return ByteBuffer(bytes: text)
    }

    static func upload(_ client: some TestClientProtocol, _ session: Harness.Session, body: ByteBuffer,
                       contentType: String = "multipart/form-data; boundary=\(boundary)") async throws -> (HTTPResponse.Status, String) {
        let response = try await client.execute(uri: "/settings/import", method: .post,
                                                headers: [.cookie: session.cookie, .contentType: contentType], body: body)
        return (response.status, String(buffer: response.body))
    }

    /// Waits (at most 10 s) until the household's uploads are all imported or failed.
    static func untilImported(_ harness: Harness, count: Int) async throws -> [ImportJob] {
        let jobs = SQLiteImportJobStore(harness.database)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let listed = try await jobs.jobs(of: .household, limit: 50)
            if listed.count >= count, listed.allSatisfy({ !$0.isUnfinished }) { return listed }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the uploads were not imported within 10 s")
        return try await jobs.jobs(of: .household, limit: 50)
    }

    static let scrobbles = (0..<40).map { n in
        Scrobble(instant: 1_625_000_000 + Int64(n) * 900, artist: "Portishead", album: "Dummy", track: "Track \(n % 11)")
    }

    @Test func aLastFMCSVAndAListenBrainzZIPAreImportedIntoMyArchive() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "rj"], session: session).status == .seeOther)
            let csv = ([csvHeader] + Self.scrobbles.map(csvLine)).joined(separator: "\n") + "\n"
            let sent = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "C:\\Users\\rj\\scrobbles.csv",
                                                                              contents: Data(csv.utf8)))
            #expect(sent.0 == .seeOther, "\(sent.1)")
            let dir = try TemporaryDirectory()
            let zip = dir.url.appendingPathComponent("listenbrainz_rj_1700000000.zip")
            let listens = (0..<12).map { n in
                #"{"listened_at": \#(1_626_000_000 + n * 600), "track_metadata": {"artist_name": "Björk", "release_name": "Homogenic", "track_name": "Jóga \#(n)"}}"#
            }.joined(separator: "\n") + "\n"
            let archive = try ZIPFoundation.Archive(url: zip, accessMode: .create)
            let data = Data(listens.utf8)
            try archive.addEntry(with: "listens/2021/7.jsonl", type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) {
                position, size in data.subdata(in: Int(position)..<(Int(position) + size))
            }
            let zipped = try Data(contentsOf: zip)
            let second = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "listenbrainz_rj_1700000000.zip",
                                                                                contents: zipped))
            #expect(second.0 == .seeOther, "\(second.1)")
            let jobs = try await Self.untilImported(harness, count: 2)
            // Not indexed unless both are there: a slow run fails here, it does not trap.
            try #require(jobs.count == 2, "\(jobs.map(\.fileName))")
            #expect(jobs.map(\.fileName) == ["listenbrainz_rj_1700000000.zip", "scrobbles.csv"])
            #expect(jobs.allSatisfy { $0.state == .done }, "\(jobs.map(\.reason))")
            #expect(jobs[1].summary?.contains("Imported 40 scrobbles for RJ") == true, "\(jobs[1].summary ?? "")")
            #expect(jobs[0].summary?.contains("listens/2021/7.jsonl") == true, "\(jobs[0].summary ?? "")")
            #expect(try await SQLiteScrobbleStore(database: harness.database).scrobbleCount(of: try Username("rj")) == 52)
            // The files are gone once read; Settings says what came of them.
            #expect(jobs.allSatisfy { !FileManager.default.fileExists(atPath: $0.path) })
            let settings = try await client.get("/settings")
            #expect(settings.body.contains("Bring in an export"))
            #expect(settings.body.contains("scrobbles.csv") && settings.body.contains("Imported 40 scrobbles for RJ"), "\(settings.body)")
            // The chart of that week is the archive's now.
            let chart = try await client.get("/u/RJ/week/2021-06-30")
            #expect(chart.status == .ok && chart.body.contains("Portishead"), "\(chart.status)")
        }
    }

    /// A Vinylogue export uploaded on Settings brings back its album
    /// choices as `vinylogue import` does: the switch and each choice,
    /// counted into the charts, said in the upload's summary.
    @Test func aVinylogueExportBringsBackItsAlbumChoices() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "rj"], session: session).status == .seeOther)
            let dir = try TemporaryDirectory()
            let zip = dir.url.appendingPathComponent("vinylogue-rj.zip")
            let listens = (0..<12).map { n in
                let album = n % 3 == 0 ? "Homogenic (Deluxe)" : "Homogenic"
                return #"{"listened_at": \#(1_626_000_000 + n * 600), "track_metadata": {"artist_name": "Björk", "release_name": "\#(album)", "track_name": "Jóga \#(n)"}}"#
            }.joined(separator: "\n") + "\n"
            let albums = AlbumFoldingMember.json(.editions, choices: [
                AlbumChoice(kind: .apart, key: "", target: nil, artist: "Björk", album: "Homogenic (Deluxe)", targetArtist: nil, targetAlbum: nil,
                            madeAt: Date(timeIntervalSince1970: 1_700_000_000)),
            ])
            let archive = try ZIPFoundation.Archive(url: zip, accessMode: .create)
            for (path, text) in [("listens/2021/7.jsonl", listens), (AlbumFoldingMember.path, albums)] {
                let data = Data(text.utf8)
                try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                    data.subdata(in: Int(position)..<(Int(position) + size))
                }
            }
            let sent = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "vinylogue-rj.zip",
                                                                              contents: try Data(contentsOf: zip)))
            #expect(sent.0 == .seeOther, "\(sent.1)")
            let jobs = try await Self.untilImported(harness, count: 1)
            #expect(jobs.first?.state == .done, "\(jobs.map(\.reason))")
            #expect(jobs.first?.summary?.contains("As the export says, one album was kept apart or joined.") == true, "\(jobs.first?.summary ?? "")")
            let rj = try Username("rj")
            #expect(try await SQLiteScrobbleStore(database: harness.database).albumChoices(of: rj).map(\.album) == ["Homogenic (Deluxe)"])
            await harness.idle()
            let chart = try await client.get("/api/u/RJ/chart?week=2021-07-11")
            #expect(chart.body.contains("Homogenic (Deluxe)"), "kept apart in the chart: \(chart.body)")
        }
    }

    /// An import is a change of what the person's pages show: a page kept
    /// before it is forgotten when its listens are stored (it was shown
    /// until it expired, a minute later).
    @Test func aPageKeptBeforeAnImportShowsWhatItStored() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "rj"], session: session).status == .seeOther)
            let earlier = Scrobble(instant: 1_625_000_000 - 600, artist: "Massive Attack", album: "Mezzanine", track: "Angel")
            _ = try await SQLiteScrobbleStore(database: harness.database).store([earlier], of: Username("RJ"), origin: .received)
            let before = try await client.get("/api/u/RJ/chart?week=2021-06-30")
            #expect(before.status == .ok && before.body.contains("Mezzanine") && !before.body.contains("Dummy"), "\(before.body)")
            let csv = ([csvHeader] + Self.scrobbles.map(csvLine)).joined(separator: "\n") + "\n"
            let sent = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "scrobbles.csv", contents: Data(csv.utf8)))
            #expect(sent.0 == .seeOther, "\(sent.1)")
            let jobs = try await Self.untilImported(harness, count: 1)
            #expect(jobs.first?.state == .done, "\(jobs.map(\.reason))")
            let after = try await client.get("/api/u/RJ/chart?week=2021-06-30")
            #expect(after.status == .ok && after.body.contains("Dummy") && after.body.contains("Mezzanine"), "\(after.body)")
        }
    }

    @Test func hostileUploadsAreSentencesAndStoreNothing() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "rj"], session: session).status == .seeOther)
            let csv = Data(([csvHeader] + Self.scrobbles.map(csvLine)).joined(separator: "\n").utf8)
            // No CSRF token.
            let forged = try await Self.upload(client, session, body: Self.body(token: "not-the-token", fileName: "a.csv", contents: csv))
            #expect(forged.0 == .forbidden, "\(forged.1)")
            // Cut off before its closing boundary.
            let cut = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "a.csv", contents: csv, closed: false))
            #expect(cut.0 == .badRequest && cut.1.contains("cut off before its end"), "\(cut.1)")
            // Not a form.
            let json = try await Self.upload(client, session, body: ByteBuffer(string: "{}"), contentType: "application/json")
            #expect(json.0 == .unsupportedMediaType && json.1.contains("Uploads come from the form on Settings"), "\(json.1)")
            // A file Vinylogue does not read: stored, then refused with the importer's sentence.
            let junk = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "holiday.jpg",
                                                                              contents: Data(repeating: 0xFF, count: 3000)))
            #expect(junk.0 == .seeOther)
            let jobs = try await Self.untilImported(harness, count: 1)
            try #require(jobs.count == 1)
            #expect(jobs[0].state == .failed)
            #expect(jobs[0].reason?.contains("“holiday.jpg” is not an export Vinylogue recognises") == true, "\(jobs[0].reason ?? "")")
            #expect(try await SQLiteScrobbleStore(database: harness.database).scrobbleCount(of: try Username("rj")) == 0)
            // Nothing is left in the uploads directory.
            let uploads = harness.dataDirectory.appendingPathComponent("uploads")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: uploads.path)) ?? []).isEmpty)
        }
    }

    @Test func aVisitorCannotUploadIntoAnAccount() async throws {
        try await Harness.run(signIn: true) { _, client in
            let session = try await client.session(from: "/")
            let csv = Data(([csvHeader] + Self.scrobbles.map(csvLine)).joined(separator: "\n").utf8)
            let refused = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: "a.csv", contents: csv))
            #expect(refused.0 == .forbidden || refused.0 == .unauthorized, "\(refused.0) \(refused.1)")
            #expect(refused.1.contains("Sign in with Last.fm"), "\(refused.1)")
        }
    }

    /// Issue 38: `filename="a;b.csv"` was shown as `"a`. A quoted file
    /// name is read by the quoted-string rules: `;` inside it is the name's,
    /// and `\"` is a quote.
    @Test func aQuotedFileNameIsReadWhole() async throws {
        try await Harness.run { harness, client in
            let session = try await client.session()
            #expect(try await client.post("/users", ["username": "rj"], session: session).status == .seeOther)
            let csv = Data(([csvHeader] + Self.scrobbles.map(csvLine)).joined(separator: "\n").utf8)
            for sent in ["a;b.csv", #"say \"hi\"; name=\"x\".csv"#] {
                let answer = try await Self.upload(client, session, body: Self.body(token: session.token, fileName: sent, contents: csv))
                #expect(answer.0 == .seeOther, "\(answer.1)")
            }
            let jobs = try await Self.untilImported(harness, count: 2)
            #expect(Set(jobs.map(\.fileName)) == ["a;b.csv", #"say "hi"; name="x".csv"#], "\(jobs.map(\.fileName))")
            #expect(jobs.allSatisfy { $0.state == .done }, "\(jobs.map(\.reason))")
        }
    }
}
