import Foundation
import NIOSSL
import TestSupport

/// A throwaway CA and two server certificates it signed, made by the
/// `openssl` command in a temporary folder: one for 127.0.0.1 (an IP SAN),
/// one for another name only.
struct TestCertificates {
    let folder: URL
    var caFile: String { folder.appendingPathComponent("ca.pem").path }

    /// Whether the TLS tests run: where `openssl` is installed, and always
    /// under CI (`CI` set), where a missing `openssl` must fail them, not
    /// skip them in silence (`scripts/test` installs it).
    static var openSSLIsInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// One set for the whole run, made once on a thread of its own: each
    /// `openssl` waits for a process, which must not hold one of Swift's
    /// few cooperative threads (a loaded run stalled on them).
    static let shared = Task<TestCertificates, any Error> {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try make() }) }
        }
    }

    static func make() throws -> TestCertificates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mail-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificates = TestCertificates(folder: folder)
        try certificates.openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Mail tests CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
        )
        try certificates.makeLeaf("ip", subjectAltName: "IP:127.0.0.1")
        try certificates.makeLeaf("other", subjectAltName: "DNS:mail.other.example")
        return certificates
    }

    private func makeLeaf(_ name: String, subjectAltName: String) throws {
        try "subjectAltName=\(subjectAltName)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(to: folder.appendingPathComponent("\(name).ext"), atomically: true, encoding: .utf8)
        try openssl(
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"
        )
        try openssl(
            "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "\(name).pem", "-days", "2", "-extfile", "\(name).ext"
        )
    }

    /// A server TLS context presenting the `ip` or `other` certificate.
    func serverContext(_ name: String) throws -> NIOSSLContext {
        let certificates = try NIOSSLCertificate.fromPEMFile(folder.appendingPathComponent("\(name).pem").path)
        let key = try NIOSSLPrivateKey(file: folder.appendingPathComponent("\(name).key").path, format: .pem)
        return try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key)
        ))
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    private func openssl(_ arguments: String...) throws {
        // `ChildProcess` (posix_spawn): Foundation's `Process` crashed the test process in libdispatch.
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OpenSSLFailed(arguments: arguments, status: process.terminationStatus)
        }
    }
}

struct OpenSSLFailed: Error, CustomStringConvertible {
    var arguments: [String]
    var status: Int32
    var description: String { "openssl \(arguments.joined(separator: " ")) exited with \(status)." }
}
