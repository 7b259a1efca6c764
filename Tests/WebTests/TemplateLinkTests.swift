import Foundation
import Testing

/// Templates take every URL from `Paths` (through `layout.links` or a view
/// field); none spells a route of its own, so a route moved in one place
/// cannot leave a dead link in a template.
@Suite struct TemplateLinkTests {
    @Test func noTemplateSpellsARoute() throws {
        let templates = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Web/Templates")
        let names = try FileManager.default.contentsOfDirectory(atPath: templates.path).filter { $0.hasSuffix(".mustache") }
        #expect(names.count >= 7)
        let spelled = try Regex(#"(href|src|action|-url)\s*=\s*"/"#)
        for name in names {
            let text = try String(contentsOf: templates.appendingPathComponent(name), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(spelled) {
                Issue.record("\(name):\(number + 1) spells a URL: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}
