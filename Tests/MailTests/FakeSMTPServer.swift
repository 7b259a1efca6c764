import NIOCore
import NIOPosix
import NIOSSL

/// What the fake does with a command line.
enum FakeResponse: Sendable {
    /// Writes these reply lines (CRLF is added); the lines after it are
    /// answered by `then`, in order, whatever they say (AUTH LOGIN's steps).
    case reply([String], then: [String] = [])
    /// Says nothing, ever again.
    case silence
    /// Closes the connection without a word.
    case close
    /// `220`, then TLS with this context from the next byte on.
    case startTLS(NIOSSLContext)

    static func reply(_ line: String) -> FakeResponse { .reply([line]) }
}

/// A scripted SMTP server conversation: sensible replies to every command,
/// except where `overrides` (keyed by the upper-cased verb) says otherwise.
struct FakeSMTPScript: Sendable {
    /// TLS from the first byte (smtps), with this context.
    var implicitTLS: NIOSSLContext?
    var greeting: [String] = ["220 fake.test ESMTP ready"]
    var ehlo: [String] = ["250-fake.test greets you", "250-PIPELINING", "250-SIZE 10240000", "250 8BITMIME"]
    /// The EHLO reply once TLS is on, if it differs.
    var ehloAfterTLS: [String]?
    var overrides: [String: FakeResponse] = [:]
    /// The reply to the final `.`.
    var afterMessage: FakeResponse = .reply("250 2.0.0 Ok: queued as FAKE1")

    func response(to line: String, tlsIsOn: Bool) -> FakeResponse {
        let verb = line.split(separator: " ", maxSplits: 1).first.map { $0.uppercased() } ?? ""
        let verbBeforeColon = verb.split(separator: ":").first.map(String.init) ?? verb
        if let override = overrides[verbBeforeColon] { return override }
        switch verbBeforeColon {
        case "EHLO": return .reply(tlsIsOn ? (ehloAfterTLS ?? ehlo) : ehlo)
        case "HELO": return .reply("250 fake.test")
        case "MAIL": return .reply("250 2.1.0 Ok")
        case "RCPT": return .reply("250 2.1.5 Ok")
        case "DATA": return .reply("354 End data with <CR><LF>.<CR><LF>")
        case "QUIT": return .reply("221 2.0.0 Bye")
        case "RSET", "NOOP": return .reply("250 2.0.0 Ok")
        default: return .reply("502 5.5.2 Error: command not recognized")
        }
    }
}

/// What one connection to the fake carried.
struct FakeTranscript: Sendable {
    /// Every line outside DATA, as received (AUTH payloads too).
    var lines: [String] = []
    /// Each message between DATA and `.`, dot-unstuffed, CRLFs kept.
    var messages: [[UInt8]] = []
    /// Whether STARTTLS was done.
    var tlsWasOn = false
    /// Every byte received, before TLS or after it (decrypted).
    var allBytes: [UInt8] = []
}

/// One connection's side of the fake's conversation.
final class FakeSMTPSession: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let script: FakeSMTPScript
    private let finished: AsyncStream<FakeTranscript>.Continuation
    private var buffer: [UInt8] = []
    private var transcript = FakeTranscript()
    private var queued: [String] = []
    private var inData = false
    private var message: [UInt8] = []
    private var silent = false
    private var ended = false

    init(script: FakeSMTPScript, finished: AsyncStream<FakeTranscript>.Continuation) {
        self.script = script
        self.finished = finished
    }

    func channelActive(context: ChannelHandlerContext) {
        write(script.greeting, context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Array(buffer: unwrapInboundIn(data))
        transcript.allBytes += bytes
        buffer += bytes
        while !silent, let lineEnd = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(buffer[..<lineEnd])
            buffer.removeSubrange(...lineEnd)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if inData {
                takeDataLine(line, context: context)
            } else {
                takeCommand(String(decoding: line, as: UTF8.self), context: context)
            }
        }
    }

    private func takeDataLine(_ line: [UInt8], context: ChannelHandlerContext) {
        if line == [UInt8(ascii: ".")] {
            inData = false
            transcript.messages.append(message)
            message = []
            respond(script.afterMessage, verb: "", context: context)
            return
        }
        message += line.first == UInt8(ascii: ".") ? Array(line.dropFirst()) : line
        message += [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
    }

    private func takeCommand(_ line: String, context: ChannelHandlerContext) {
        transcript.lines.append(line)
        if !queued.isEmpty {
            write([queued.removeFirst()], context: context)
            return
        }
        let verb = line.split(separator: " ").first.map { $0.uppercased() } ?? ""
        respond(script.response(to: line, tlsIsOn: transcript.tlsWasOn), verb: verb, context: context)
    }

    private func respond(_ response: FakeResponse, verb: String, context: ChannelHandlerContext) {
        switch response {
        case .reply(let lines, let then):
            write(lines, context: context)
            queued = then
            if verb == "DATA", lines.last?.hasPrefix("354") == true { inData = true }
        case .silence:
            silent = true
        case .close:
            silent = true
            context.close(promise: nil)
        case .startTLS(let tls):
            write(["220 2.0.0 Ready to start TLS"], context: context)
            buffer = []
            transcript.tlsWasOn = true
            do {
                try context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
            } catch {
                context.close(promise: nil)
            }
        }
    }

    private func write(_ lines: [String], context: ChannelHandlerContext) {
        let text = lines.map { $0 + "\r\n" }.joined()
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func finish() {
        guard !ended else { return }
        ended = true
        finished.yield(transcript)
    }
}

/// An SMTP server on 127.0.0.1 that follows a script and reports what each
/// connection carried once it has closed.
struct FakeSMTPServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let transcripts: AsyncStream<FakeTranscript>

    /// Listens on a free port with `script` until `body` is done.
    static func with<T: Sendable>(
        _ script: FakeSMTPScript, _ body: (FakeSMTPServer) async throws -> T
    ) async throws -> T {
        let (transcripts, continuation) = AsyncStream.makeStream(of: FakeTranscript.self)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = script.implicitTLS {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try channel.pipeline.syncOperations.addHandler(FakeSMTPSession(script: script, finished: continuation))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = FakeSMTPServer(port: channel.localAddress?.port ?? 0, channel: channel, transcripts: transcripts)
        do {
            let result = try await body(server)
            try? await channel.close()
            continuation.finish()
            return result
        } catch {
            try? await channel.close()
            continuation.finish()
            throw error
        }
    }

    /// The first connection's transcript, once that connection has closed (10 s at most).
    func firstTranscript() async throws -> FakeTranscript {
        let transcripts = self.transcripts
        return try await withDeadline("the fake server's connection to close") {
            for await transcript in transcripts { return transcript }
            throw DeadlinePassed(what: "the fake server's transcript (it stopped)")
        }
    }
}

/// A wait in a test that took too long.
struct DeadlinePassed: Error, CustomStringConvertible {
    var what: String
    var description: String { "Gave up waiting for \(what)." }
}

/// `body`'s result, or `DeadlinePassed` after `seconds`.
func withDeadline<T: Sendable>(
    _ what: String, seconds: Double = 10, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw DeadlinePassed(what: what)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw DeadlinePassed(what: what) }
        return first
    }
}
