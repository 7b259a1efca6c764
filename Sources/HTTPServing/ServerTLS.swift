import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS

/// HTTPS for `serve`: the certificate chain and private key read from PEM
/// files, ready for Hummingbird's TLS channel. Self-hosters point players
/// (pylast speaks only HTTPS) straight at the server, without a proxy.
public struct ServerTLS: Sendable {
    package let configuration: TLSConfiguration

    /// Reads `files`; a file that cannot be read or parsed is said so.
    public init(files: ServerConfiguration.TLSFiles) throws(TLSFilesUnreadable) {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificatePath)
        } catch {
            throw TLSFilesUnreadable(path: files.certificatePath, what: "certificate chain")
        }
        guard !chain.isEmpty else { throw TLSFilesUnreadable(path: files.certificatePath, what: "certificate chain") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.keyPath, format: .pem)
        } catch {
            throw TLSFilesUnreadable(path: files.keyPath, what: "private key")
        }
        configuration = .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// `base` wrapped in TLS.
    package func server(over base: HTTPServerBuilder) throws -> HTTPServerBuilder {
        try .tls(base, tlsConfiguration: configuration)
    }
}

/// A TLS file that could not be read as PEM.
public struct TLSFilesUnreadable: Error, CustomStringConvertible {
    public let path: String
    /// "certificate chain" or "private key".
    public let what: String

    public var description: String {
        "The TLS \(what) could not be read from \(path): it must be a readable PEM file."
    }
}
