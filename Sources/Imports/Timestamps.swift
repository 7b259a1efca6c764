/// Date formats of the export files, parsed by hand: they are fixed, and an
/// import of a million lines should not spend its time in a DateFormatter.
enum Timestamps {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Unix seconds of a UTC civil date and time (proleptic Gregorian).
    static func unix(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64? {
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `31 Jan 2020 18:25` (also `31 Jan 2020, 18:25`), in UTC: the date
    /// column of Last.fm's header-less scrobble exports.
    static func lastFMExportDate(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," })
        guard parts.count == 4, let day = Int(parts[0]), let year = Int(parts[2]),
              let month = months.firstIndex(of: parts[1].lowercased()) else { return nil }
        let clock = parts[3].split(separator: ":")
        guard clock.count == 2 || clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]) else { return nil }
        let second = clock.count == 3 ? Int(clock[2]) : 0
        guard let second, (1000...9999).contains(year) else { return nil }
        return unix(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second)
    }

    /// `2020-01-31 18:28` in UTC: Spotify account data's `endTime`.
    static func minuteUTC(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 16, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: " "), b[13] == UInt8(ascii: ":") else {
            return nil
        }
        func number(_ from: Int, _ count: Int) -> Int? { Int(String(decoding: b[from..<(from + count)], as: UTF8.self)) }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2) else { return nil }
        return unix(year: year, month: month, day: day, hour: hour, minute: minute, second: 0)
    }

    /// ISO 8601 with a time and an offset: `2020-01-31T18:25:07Z`,
    /// `2020-01-31T18:25:07.123+01:00`.
    static func iso8601(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var value = 0
            for byte in b[from..<(from + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              let base = unix(year: year, month: month, day: day, hour: hour, minute: minute, second: second) else { return nil }
        var i = 19
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, (48...57).contains(b[i]) { i += 1 }
        }
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z"), i + 1 == b.count { return base }
        guard b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), b.count == i + 6, b[i + 3] == UInt8(ascii: ":"),
              let oh = number(i + 1, 2), let om = number(i + 4, 2) else { return nil }
        let offset = Int64(oh * 3600 + om * 60)
        return b[i] == UInt8(ascii: "+") ? base - offset : base + offset
    }
}
