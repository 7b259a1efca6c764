import Foundation
import VinylogueCore

/// ybsc's history as the presenter tests hold it: a chart list from February
/// 2005 to July 2020 whose last week, the captured one, has three albums.
enum CapturedHistory {
    static let user = try! Username("ybsc")
    /// Week 28 · Jul 5 – 12, 2020
    static let week = ChartWeek(from: 1_593_950_400, to: 1_594_555_200)
    static let list = scriptedList(start: 1_108_296_000, script: Array(repeating: 0, count: 804))
    static let rows = [
        ChartEntry(rank: 1, artist: "PUP", name: "Live at The Electric Ballroom", plays: 22),
        ChartEntry(rank: 2, artist: "CoVet", name: "technicolor", plays: 20),
        ChartEntry(rank: 3, artist: "Nova Charisma", name: "Exposition I", plays: 1),
    ]
}
