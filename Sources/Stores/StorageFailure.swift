import Foundation
import VinylogueCore

/// The operating system's words for a file or directory that a store or an
/// import could not use, as a `SourceError` a person can act on: a full
/// disk is said to be one, a path that cannot be a directory says why.
package enum StorageFailure {
    /// The `SourceError` for a failure outside any database: a full disk
    /// (ENOSPC) is `.diskFull`, anything else `.storage` in the system's words.
    package static func failure(_ error: any Error, path: String? = nil) -> SourceError {
        if let source = error as? SourceError { return source }
        let prefix = path.map { "\($0): " } ?? ""
        if posixCode(of: error) == ENOSPC {
            return .diskFull(detail: prefix + String(cString: strerror(ENOSPC)))
        }
        return .storage(detail: prefix + reason(error))
    }

    /// Why a directory cannot be made, when the path itself says: an
    /// ancestor that is a file, or one that may not be written to.
    package static func obstacle(to directory: URL) -> String? {
        var ancestor = directory.standardizedFileURL
        while ancestor.path != "/" {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: ancestor.path, isDirectory: &isDirectory) {
                if !isDirectory.boolValue { return "\(ancestor.path) is a file, not a directory" }
                if !FileManager.default.isWritableFile(atPath: ancestor.path) { return "\(ancestor.path) may not be written to" }
                return nil
            }
            ancestor.deleteLastPathComponent()
        }
        return nil
    }

    /// The operating system's own words for `error`, without Foundation's
    /// dump of its user-info dictionary.
    package static func reason(_ error: any Error) -> String {
        if let code = posixCode(of: error) { return String(cString: strerror(code)) }
        return (error as NSError).localizedDescription
    }

    /// The POSIX error code inside a Foundation error, if it carries one.
    package static func posixCode(of error: any Error) -> Int32? {
        var current: NSError? = error as NSError
        while let nsError = current {
            if nsError.domain == NSPOSIXErrorDomain { return Int32(nsError.code) }
            current = nsError.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        return nil
    }
}
