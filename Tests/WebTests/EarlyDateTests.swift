import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VinylogueCore

/// A valid date before 1970 is a date (the OpenAPI document says
/// `format: date`): it is answered as 1 January 1970 is, with a sentence
/// that the history starts later (a 404 from the JSON API, the chart page
/// with its way to other years), not "is not a date" (issue 38).
@Suite struct EarlyDateTests {
    @Test func aDateBefore1970IsADateBeforeAnyHistory() async throws {
        try await Harness.run(demo: true) { _, client in
            let epoch = try await client.get("/api/u/demo/chart?week=1970-01-01")
            #expect(epoch.status == .notFound, "\(epoch.body)")
            let epochPage = try await client.get("/u/demo/week/1970-01-01")
            #expect(epochPage.body.contains("listening history starts in"))
            for day in ["1969-12-31", "1212-11-07", "0001-01-01"] {
                let api = try await client.get("/api/u/demo/chart?week=\(day)")
                #expect(api.status == .notFound, "\(day): \(api.body)")
                #expect(api.body.contains("listening history starts in"), "\(day): \(api.body)")
                #expect(!api.body.contains("is not a date"), "\(day)")
                let page = try await client.get("/u/demo/week/\(day)")
                #expect(page.status == epochPage.status, "\(day): \(page.status)")
                #expect(page.body.contains("listening history starts in"), "\(day)")
            }
            // Not dates, still: said so.
            for junk in ["1969-02-30", "99-01-01", "-001-01-01", "1969-13-01"] {
                let api = try await client.get("/api/u/demo/chart?week=\(junk)")
                #expect(api.status == .badRequest && api.body.contains("is not a date"), "\(junk): \(api.body)")
            }
        }
    }

    @Test func theOpenAPIDocumentSaysSo() async throws {
        try await Harness.run { _, client in
            let document = try await client.get("/openapi.json").body
            #expect(document.contains("A date before the person's history (any year from 0001) is answered 404"), "\(document.prefix(200))")
        }
    }
}
