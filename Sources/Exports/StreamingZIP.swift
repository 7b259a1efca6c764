import CDeflate
import Foundation

/// A ZIP archive written front to back, as it is sent: each member's header,
/// then its bytes deflated as they come, then a data descriptor with its
/// CRC-32 and sizes, and the table of contents at the end. Nothing is held
/// but the member being deflated and the list of members so far, so an
/// archive of any length streams in constant memory.
///
/// Members are deflated (zlib, raw deflate), names are UTF-8 (flag bit 11),
/// times are the archive's `modified` instant in UTC. No ZIP64: a member or
/// the whole archive past 4 GiB is refused with `StreamingZIP.TooLarge`
/// (a person's listens are about 25 MB per million compressed).
public final class StreamingZIP {
    /// A member or the archive grew past what a ZIP without ZIP64 can describe.
    public struct TooLarge: Error, Sendable {}

    private struct Member {
        let name: [UInt8]
        let offset: UInt32
        var crc: UInt32 = 0
        var compressed: UInt64 = 0
        var uncompressed: UInt64 = 0
    }

    private var members: [Member] = []
    private var current: Member?
    private var written: UInt64 = 0
    private var stream = z_stream()
    private var deflating = false
    private let dosTime: UInt16, dosDate: UInt16
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    /// An empty archive whose members carry `modified` as their time.
    public init(modified: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: modified)
        dosTime = UInt16((c.hour ?? 0) << 11 | (c.minute ?? 0) << 5 | (c.second ?? 0) / 2)
        dosDate = UInt16(max(0, (c.year ?? 1980) - 1980) << 9 | (c.month ?? 1) << 5 | (c.day ?? 1))
    }

    deinit {
        if deflating { deflateEnd(&stream) }
    }

    /// Starts a member called `name` (ending the one before): its header.
    public func begin(_ name: String) throws -> [UInt8] {
        // Ending the member before counts its bytes in `written`.
        var bytes = current == nil ? [] : try end()
        guard written <= UInt64(UInt32.max) else { throw TooLarge() }
        let member = Member(name: Array(name.utf8), offset: UInt32(written))
        var header: [UInt8] = []
        header.append(le32: 0x0403_4B50)
        header.append(le16: 20)              // version needed: 2.0 (deflate)
        header.append(le16: 0x0808)          // sizes in the data descriptor; UTF-8 names
        header.append(le16: 8)               // deflate
        header.append(le16: dosTime)
        header.append(le16: dosDate)
        header.append(le32: 0)               // CRC-32, compressed and uncompressed
        header.append(le32: 0)               // sizes: in the data descriptor
        header.append(le32: 0)
        header.append(le16: UInt16(member.name.count))
        header.append(le16: 0)               // no extra field
        header += member.name
        bytes += header
        written += UInt64(header.count)
        current = member
        stream = z_stream()
        let status = cdeflate_init_raw(&stream, 6)
        guard status == Z_OK else { throw DeflateFailed(status: status) }
        deflating = true
        return bytes
    }

    /// Adds `bytes` to the current member; returns what is ready to send.
    public func add(_ bytes: [UInt8]) throws -> [UInt8] {
        guard var member = current else { preconditionFailure("add(_:) before begin(_:)") }
        member.crc = bytes.withUnsafeBufferPointer { UInt32(crc32(uLong(member.crc), $0.baseAddress, uInt($0.count))) }
        member.uncompressed += UInt64(bytes.count)
        current = member
        guard member.uncompressed <= UInt64(UInt32.max) else { throw TooLarge() }
        return try deflate(bytes, finishing: false)
    }

    /// Adds the UTF-8 of `text` to the current member.
    public func add(_ text: String) throws -> [UInt8] { try add(Array(text.utf8)) }

    /// Ends the archive: the last member's end, then the table of contents.
    public func finish() throws -> [UInt8] {
        var bytes = current == nil ? [] : try end()
        let start = written
        var directory: [UInt8] = []
        for member in members {
            directory.append(le32: 0x0201_4B50)
            directory.append(le16: 3 << 8 | 20)  // made by Unix, ZIP 2.0
            directory.append(le16: 20)
            directory.append(le16: 0x0808)
            directory.append(le16: 8)
            directory.append(le16: dosTime)
            directory.append(le16: dosDate)
            directory.append(le32: member.crc)
            directory.append(le32: UInt32(member.compressed))
            directory.append(le32: UInt32(member.uncompressed))
            directory.append(le16: UInt16(member.name.count))
            directory.append(le16: 0)            // extra
            directory.append(le16: 0)            // comment
            directory.append(le16: 0)            // disk
            directory.append(le16: 0)            // internal attributes
            directory.append(le32: UInt32(0o100644) << 16)  // a regular file, rw-r--r--
            directory.append(le32: member.offset)
            directory += member.name
        }
        guard start + UInt64(directory.count) <= UInt64(UInt32.max), members.count <= Int(UInt16.max) else { throw TooLarge() }
        let size = UInt32(directory.count)
        directory.append(le32: 0x0605_4B50)  // the end record
        directory.append(le16: 0)            // this disk
        directory.append(le16: 0)            // the directory's disk
        directory.append(le16: UInt16(members.count))
        directory.append(le16: UInt16(members.count))
        directory.append(le32: size)
        directory.append(le32: UInt32(start))
        directory.append(le16: 0)            // no comment
        written += UInt64(directory.count)
        bytes += directory
        return bytes
    }

    /// Ends the current member: the rest of its deflated bytes and its data descriptor.
    private func end() throws -> [UInt8] {
        guard current != nil else { return [] }
        var bytes = try deflate([], finishing: true)
        deflateEnd(&stream)
        deflating = false
        let member = current!
        var descriptor: [UInt8] = []
        descriptor.append(le32: 0x0807_4B50)
        descriptor.append(le32: member.crc)
        descriptor.append(le32: UInt32(member.compressed))
        descriptor.append(le32: UInt32(member.uncompressed))
        written += UInt64(descriptor.count)
        bytes += descriptor
        members.append(member)
        current = nil
        return bytes
    }

    private func deflate(_ input: [UInt8], finishing: Bool) throws -> [UInt8] {
        var produced: [UInt8] = []
        try input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            defer { stream.next_in = nil }
            var status: Int32
            // Until the input is taken and the output buffer was not filled
            // (more may be waiting), or, finishing, until the stream's end.
            repeat {
                status = output.withUnsafeMutableBufferPointer { target -> Int32 in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return CDeflate.deflate(&stream, finishing ? Z_FINISH : Z_NO_FLUSH)
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { throw DeflateFailed(status: status) }
                produced += output[0..<(output.count - Int(stream.avail_out))]
            } while finishing ? status != Z_STREAM_END : stream.avail_out == 0
        }
        current!.compressed += UInt64(produced.count)
        written += UInt64(produced.count)
        guard current!.compressed <= UInt64(UInt32.max), written <= UInt64(UInt32.max) else { throw TooLarge() }
        return produced
    }

    /// zlib refused (out of memory): not expected of deflate in memory.
    struct DeflateFailed: Error { let status: Int32 }
}

extension Array where Element == UInt8 {
    mutating func append(le16 value: UInt16) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8))
    }

    mutating func append(le32 value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
