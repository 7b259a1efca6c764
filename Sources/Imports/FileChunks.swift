import Foundation
import Stores
import VinylogueCore

/// Reads a file front to back in fixed-size chunks, so an import's memory
/// does not grow with the file.
struct FileChunks {
    static let chunkSize = 1 << 20
    private let fd: Int32
    private let path: String
    /// Bytes handed out so far.
    private(set) var bytesRead: Int64 = 0
    let totalBytes: Int64

    init(path: String) throws(SourceError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        var info = stat()
        fstat(fd, &info)
        // open(2) succeeds on a directory; only read(2) fails, with a
        // reason that reads like a broken disk. Say what it is instead.
        guard info.st_mode & S_IFMT != S_IFDIR else {
            _ = Foundation.close(fd)
            throw .unreadableFile(path: path, reason: "it is a directory, not an export file")
        }
        self.fd = fd
        self.path = path
        self.totalBytes = Int64(info.st_size)
    }

    func close() { _ = Foundation.close(fd) }

    /// The next chunk, or `nil` at the end of the file.
    mutating func next() throws(SourceError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, Self.chunkSize) }
        if count < 0 { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        if count == 0 { return nil }
        buffer.removeSubrange(count...)
        bytesRead += Int64(count)
        return buffer
    }

    /// The UTF-8 byte-order mark some editors write at the start of a file.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}

/// Splits chunks into lines (without their `\n` or `\r\n`), carrying a
/// partial line from one chunk to the next. Lines are numbered from 1.
///
/// A line longer than `maxLineLength` is never buffered whole: its bytes
/// are dropped as they arrive and the line is handed on as `.tooLong`, so
/// memory stays bounded and no part of it is imported.
struct LineSplitter {
    /// One line of the file.
    enum Line {
        case text(ArraySlice<UInt8>)
        /// A line of `bytes` bytes, over the limit (its content is gone).
        case tooLong(bytes: Int)
    }

    private var partial: [UInt8] = []
    /// Bytes of the current line dropped so far, once it went over the limit.
    private var droppedBytes = 0
    private(set) var lineNumber = 0
    /// 16 MiB: far beyond any real export line, small enough to hold.
    static let maxLineLength = 1 << 24

    /// Calls `body` with every complete line in `chunk`.
    mutating func feed(_ chunk: [UInt8], _ body: (Line, Int) throws -> Void) rethrows {
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lineNumber += 1
            if droppedBytes > 0 {
                let bytes = droppedBytes + (newline - start)
                droppedBytes = 0
                try body(.tooLong(bytes: bytes), lineNumber)
            } else if partial.isEmpty {
                try body(.text(Self.trimCR(chunk[start..<newline])), lineNumber)
            } else if partial.count + (newline - start) > Self.maxLineLength {
                let bytes = partial.count + (newline - start)
                partial.removeAll()
                try body(.tooLong(bytes: bytes), lineNumber)
            } else {
                partial += chunk[start..<newline]
                try body(.text(Self.trimCR(partial[...])), lineNumber)
                partial.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        guard start < chunk.endIndex else { return }
        let rest = chunk.endIndex - start
        if droppedBytes > 0 {
            droppedBytes += rest
        } else if partial.count + rest > Self.maxLineLength {
            // Over the limit: stop holding the line, just count it.
            droppedBytes = partial.count + rest
            partial = []
        } else {
            partial += chunk[start...]
        }
    }

    /// Calls `body` with the last line when the file does not end in `\n`.
    mutating func finish(_ body: (Line, Int) throws -> Void) rethrows {
        if droppedBytes > 0 {
            lineNumber += 1
            let bytes = droppedBytes
            droppedBytes = 0
            try body(.tooLong(bytes: bytes), lineNumber)
            return
        }
        guard !partial.isEmpty else { return }
        lineNumber += 1
        try body(.text(Self.trimCR(partial[...])), lineNumber)
        partial.removeAll()
    }

    static func trimCR(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == UInt8(ascii: "\r") ? line.dropLast() : line
    }
}
