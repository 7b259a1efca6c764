import Foundation

/// The name=value pairs of a query string or a URL-encoded form, read as
/// the local servers read them, whether the request came over HTTP or was
/// handed over in this process: the same request gives the same fields.
public enum RequestFields {
    /// A query string (without `?`), read as Hummingbird reads one: names
    /// as sent, values percent-decoded (`+` stays `+`); a pair without `=`
    /// is a name with an empty value; a later pair wins.
    public static func query(_ query: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&") {
            guard let equals = pair.firstIndex(of: "=") else {
                fields[String(pair)] = ""
                continue
            }
            let value = pair[pair.index(after: equals)...]
            fields[String(pair[..<equals])] = value.removingPercentEncoding ?? String(value)
        }
        return fields
    }

    /// A form body (`application/x-www-form-urlencoded`): names and values
    /// with `+` as a space, then percent-decoded.
    public static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}
