/// Work with one deadline for all of it: whichever comes first, the work's
/// result or `.timedOut(server)` at `limit` (the work is then cancelled,
/// which closes its connection). What both music-server clients ask of a
/// server: an answer whole within the limit, not just its first bytes.
enum Deadline {
    static func within<T: Sendable>(_ limit: Duration, server: String,
                                    _ work: @escaping @Sendable () async -> Result<T, MusicServerError>) async -> Result<T, MusicServerError> {
        await withTaskGroup(of: Result<T, MusicServerError>?.self) { group in
            group.addTask { await work() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return Task.isCancelled ? nil : .failure(.timedOut(server))
            }
            var first: Result<T, MusicServerError>?
            for await result in group {
                if let result {
                    first = result
                    break
                }
            }
            group.cancelAll()
            return first ?? .failure(.timedOut(server))
        }
    }
}
