import Foundation
import VinylogueCore

/// Reads a file front to back in fixed-size chunks, so an import's memory
/// does not grow with the file.
struct FileChunks {
    static let chunkSize = 1 << 20
    private let fd: Int32
    /// Bytes handed out so far.
    private(set) var bytesRead: Int64 = 0
    let totalBytes: Int64

    init(path: String) throws(SourceError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .storage(detail: "cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        fstat(fd, &info)
        self.fd = fd
        self.totalBytes = Int64(info.st_size)
    }

    func close() { _ = Foundation.close(fd) }

    /// The next chunk, or `nil` at the end of the file.
    mutating func next() throws(SourceError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, Self.chunkSize) }
        if count < 0 { throw .storage(detail: "read failed: \(String(cString: strerror(errno)))") }
        if count == 0 { return nil }
        buffer.removeSubrange(count...)
        bytesRead += Int64(count)
        return buffer
    }
}

/// Splits chunks into lines (without their `\n` or `\r\n`), carrying a
/// partial line from one chunk to the next. Lines are numbered from 1.
struct LineSplitter {
    private var partial: [UInt8] = []
    private(set) var lineNumber = 0
    /// A line longer than this is reported instead of being buffered on.
    static let maxLineLength = 1 << 24

    /// Calls `body` with every complete line in `chunk`.
    mutating func feed(_ chunk: [UInt8], _ body: (ArraySlice<UInt8>, Int) throws -> Void) rethrows {
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lineNumber += 1
            if partial.isEmpty {
                try body(Self.trimCR(chunk[start..<newline]), lineNumber)
            } else {
                partial += chunk[start..<newline]
                try body(Self.trimCR(partial[...]), lineNumber)
                partial.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
        if start < chunk.endIndex, partial.count < Self.maxLineLength { partial += chunk[start...] }
    }

    /// Calls `body` with the last line when the file does not end in `\n`.
    mutating func finish(_ body: (ArraySlice<UInt8>, Int) throws -> Void) rethrows {
        guard !partial.isEmpty else { return }
        lineNumber += 1
        try body(Self.trimCR(partial[...]), lineNumber)
        partial.removeAll()
    }

    static func trimCR(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == UInt8(ascii: "\r") ? line.dropLast() : line
    }
}
