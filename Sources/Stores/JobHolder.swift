import Foundation

/// Names the worker holding a durable job's claim (a history copy, an
/// upload's import): "HOST~PIDNAMESPACE/PID/RANDOM", so that a claim held
/// by a process of this machine that has ended can be taken over at once
/// instead of waiting out its lease.
public enum JobHolder {
    /// "HOST~PIDNAMESPACE/PID/RANDOM": which machine and process holds a claim.
    public static func name() -> String {
        "\(machine())/\(getpid())/\(random())"
    }

    /// A random value that tells apart the claims of one process.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(UInt8.random(in: .min ... .max, using: &generator), radix: 16) }.joined()
    }

    /// This machine and PID namespace: two containers sharing a host name
    /// have their own process ids, so a pid is only judged where it was
    /// taken.
    public static func machine() -> String {
        let namespace = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")) ?? "no-namespace"
        return hostName() + "~" + namespace.filter { $0.isNumber }
    }

    /// This machine's name (`gethostname`: Foundation's `hostName` is not
    /// safe to call from several threads on Linux).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `holder` names a process of this machine that has ended.
    @Sendable public static func isGone(_ holder: String) -> Bool {
        let parts = holder.split(separator: "/")
        guard parts.count == 3, parts[0] == machine(), let pid = Int32(parts[1]), pid > 0 else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
