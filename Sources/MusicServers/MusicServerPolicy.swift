import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which music servers a hosted Vinylogue may be asked to reach, so that a
/// person's "music server" cannot be a way into the machine's own network:
/// public addresses only, unless the operator lists a host
/// (`VINYLOGUE_MUSIC_SERVERS`: names, `*.suffix` patterns, addresses,
/// `a.b.c.*` prefixes), as a household does for its LAN server. Every
/// address a name resolves to must be public; a name that does not
/// resolve is refused.
public struct MusicServerPolicy: Sendable {
    /// The operator's patterns, lowercased.
    public let allowed: [String]
    /// How a host's addresses are found (getaddrinfo, off the caller's
    /// thread; a table in tests).
    let resolve: @Sendable (String) async -> [String]

    public init(allowed: [String], resolve: (@Sendable (String) async -> [String])? = nil) {
        self.allowed = allowed.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        self.resolve = resolve ?? Self.systemResolve
    }

    /// `VINYLOGUE_MUSIC_SERVERS`, comma-separated.
    public init(environmentValue: String?) {
        self.init(allowed: (environmentValue ?? "").split(separator: ",").map(String.init))
    }

    /// Whether a host may be reached, and where.
    public enum Decision: Sendable, Equatable {
        /// Why not, for the person.
        case refused(String)
        /// It may; `pin` is the address that was checked, which every
        /// connection must go to (nil when the host is an address itself,
        /// or one the operator listed): the name is not looked up again,
        /// so it cannot answer differently by then (DNS rebinding).
        case allowed(pin: String?)
    }

    /// Whether `host` may be reached, and the address checked.
    public func decide(_ host: String) async -> Decision {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if allowed.contains(where: { Self.matches(host, $0) }) { return .allowed(pin: nil) }
        let isAddress = Self.isAddress(host)
        let addresses = isAddress ? [host] : await resolve(host)
        guard let first = addresses.first else { return .refused("Vinylogue could not find \(host). Check the address.") }
        if let inside = addresses.first(where: { !Self.isPublic($0) }) {
            return .refused("\(host) is on a private network (\(inside)), which this Vinylogue does not reach unless its operator lists it "
                + "(VINYLOGUE_MUSIC_SERVERS).")
        }
        return .allowed(pin: isAddress ? nil : first)
    }

    /// Nil when `host` may be reached, else why not, for the person.
    public func refusal(of host: String) async -> String? {
        if case .refused(let why) = await decide(host) { return why }
        return nil
    }

    static func matches(_ host: String, _ pattern: String) -> Bool {
        if pattern.hasPrefix("*.") { return host.hasSuffix(String(pattern.dropFirst(1))) }
        if pattern.hasSuffix(".*") { return host.hasPrefix(String(pattern.dropLast(1))) && isAddress(host) }
        return host == pattern
    }

    static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Whether an address (v4 or v6, as text) is on the public internet:
    /// not loopback, private, shared (CGNAT), link-local, multicast,
    /// reserved or unspecified.
    static func isPublic(_ text: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let b = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            return isPublicV4(b)
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { return isPublicV4(Array(b[12..<16])) }  // ::ffff:a.b.c.d
        if b.allSatisfy({ $0 == 0 }) || (b[0..<15].allSatisfy { $0 == 0 } && b[15] == 1) { return false }  // :: and ::1
        if b[0] & 0xfe == 0xfc { return false }  // fc00::/7
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return false }  // fe80::/10
        if b[0] == 0xff { return false }  // multicast
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return false }  // documentation
        if b[0..<12].allSatisfy({ $0 == 0 }) { return false }  // IPv4-compatible, deprecated
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b { return isPublicV4(Array(b[12..<16])) }  // 64:ff9b::/96
        if b[0..<8].allSatisfy({ $0 == 0 }) && b[8] == 0xff && b[9] == 0xff { return false }  // ::ffff:0:a.b.c.d, IPv4-translated
        if b[0] == 0x20 && b[1] == 0x02 { return isPublicV4(Array(b[2..<6])) }  // 6to4: 2002:a.b.c.d::/48
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00 { return false }  // Teredo, 2001::/32: it hides an IPv4 address
        return true
    }

    static func isPublicV4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false
        case (169, 254): return false
        case (172, 16...31): return false
        case (192, 168): return false
        case (192, 0) where b[2] == 0 || b[2] == 2: return false
        case (198, 18...19): return false
        case (198, 51) where b[2] == 100: return false
        case (203, 0) where b[2] == 113: return false
        default: return b[0] < 224
        }
    }

    /// getaddrinfo on a thread of its own (it blocks).
    static let systemResolve: @Sendable (String) async -> [String] = { host in
        await withCheckedContinuation { continuation in
            let thread = Thread {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, nil, &hints, &list) == 0 else { continuation.resume(returning: []); return }
                defer { freeaddrinfo(list) }
                var found: [String] = []
                var entry = list
                while let current = entry {
                    var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                    if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                        found.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                    }
                    entry = current.pointee.ai_next
                }
                continuation.resume(returning: found)
            }
            thread.start()
        }
    }
}
