import NIOCore
import NIOSSL

/// How a connection stopped giving replies.
enum SMTPConnectionEnding: Error, Equatable {
    /// The server closed it, or the network dropped it.
    case closed
    /// A reply did not come in time; the client closed the connection.
    case timedOut
    /// The TLS handshake failed, for the reason given.
    case tls(String)
    /// The server sent something that is not an SMTP reply.
    case malformed(String)
}

/// Hands each reply the decoder produces to the oldest command still
/// waiting for one, first in, first out. A reply nobody waits for yet (the
/// greeting) is kept for the next waiter. Once the connection ends, every
/// waiter, present and future, fails with the reason.
final class SMTPReplyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = SMTPReply

    private struct Waiter {
        var promise: EventLoopPromise<SMTPReply>
        var deadline: Scheduled<Void>
    }

    /// More replies than this ahead of the commands is not a conversation.
    static let maximumUnclaimedReplies = 4

    private var waiters = CircularBuffer<Waiter>()
    private var unclaimed = CircularBuffer<SMTPReply>()
    /// Why the connection gives no more replies, once it does not.
    private(set) var ending: SMTPConnectionEnding?
    private var context: ChannelHandlerContext?

    /// Whether replies came that no command asked for yet.
    var hasUnclaimedReplies: Bool { !unclaimed.isEmpty }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(.closed)
        self.context = nil
    }

    /// Completes `promise` with the next reply, or fails it with the
    /// connection's ending; after `timeout` it fails with `.timedOut` and
    /// the connection is closed (a late reply would be taken for the next
    /// command's).
    func awaitReply(_ promise: EventLoopPromise<SMTPReply>, within timeout: TimeAmount) {
        if let reply = unclaimed.popFirst() {
            promise.succeed(reply)
            return
        }
        if let ending {
            promise.fail(ending)
            return
        }
        guard let context else {
            promise.fail(SMTPConnectionEnding.closed)
            return
        }
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            end(.timedOut)
            self.context?.close(promise: nil)
        }
        waiters.append(Waiter(promise: promise, deadline: deadline))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let reply = unwrapInboundIn(data)
        if let waiter = waiters.popFirst() {
            waiter.deadline.cancel()
            waiter.promise.succeed(reply)
            return
        }
        guard ending == nil else { return }
        unclaimed.append(reply)
        if unclaimed.count > Self.maximumUnclaimedReplies {
            end(.malformed("more replies than commands"))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(Self.ending(for: error))
        context.close(promise: nil)
    }

    private func end(_ reason: SMTPConnectionEnding) {
        if ending == nil { ending = reason }
        guard let ending, !waiters.isEmpty else { return }
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting {
            waiter.deadline.cancel()
            waiter.promise.fail(ending)
        }
    }

    /// What an error in the pipeline means for the conversation.
    static func ending(for error: any Error) -> SMTPConnectionEnding {
        switch error {
        case let malformed as SMTPReplyDecoder.Malformed:
            return .malformed(malformed.reason)
        case NIOSSLError.uncleanShutdown:
            // The peer went away without TLS's close_notify: a drop like any other.
            return .closed
        case let extra as NIOSSLExtraError where extra == .failedToValidateHostname:
            return .tls("its certificate does not name this server (\(extra))")
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
            let detail = String(describing: error)
            if detail.contains("CERTIFICATE_VERIFY_FAILED") {
                return .tls("its certificate could not be verified (it is not signed by a trusted authority, or it has expired; "
                    + "for a private CA, set \(SMTPConfiguration.caFileVariable) to the CA's PEM file)")
            }
            if detail.contains("WRONG_VERSION_NUMBER") || detail.contains("PACKET_LENGTH_TOO_LONG") {
                return .tls("the server did not answer in TLS (is this port for smtp:// rather than smtps://?)")
            }
            return .tls("the TLS handshake failed (\(detail))")
        default:
            return .closed
        }
    }
}

/// One open connection to an SMTP server: commands out, replies back, in
/// turn. The handlers are held here rather than looked up in the pipeline,
/// which is emptied once the channel closes: their state says why it closed.
struct SMTPConnection: Sendable {
    let channel: any Channel
    private let decoder: NIOLoopBound<SMTPReplyDecoder>
    private let replies: NIOLoopBound<SMTPReplyHandler>

    /// Puts the decoder and the reply handler at the end of `channel`'s
    /// pipeline; call on its event loop, from the channel initializer.
    init(addingHandlersTo channel: any Channel) throws {
        let decoder = SMTPReplyDecoder()
        let replies = SMTPReplyHandler()
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(decoder)
        try operations.addHandler(replies)
        self.channel = channel
        self.decoder = NIOLoopBound(decoder, eventLoop: channel.eventLoop)
        self.replies = NIOLoopBound(replies, eventLoop: channel.eventLoop)
    }

    /// Sends `bytes` (none for the greeting) and waits for the reply.
    func reply(to bytes: ByteBuffer?, within timeout: Duration) async throws(SMTPConnectionEnding) -> SMTPReply {
        let promise = channel.eventLoop.makePromise(of: SMTPReply.self)
        let channel = self.channel
        let replies = self.replies
        channel.eventLoop.execute {
            // Waiting first: the reply cannot come before the command went out.
            replies.value.awaitReply(promise, within: TimeAmount(timeout))
            if let bytes { channel.writeAndFlush(bytes, promise: nil) }
        }
        do {
            return try await promise.futureResult.get()
        } catch let ending as SMTPConnectionEnding {
            throw ending
        } catch {
            throw .closed
        }
    }

    /// Puts TLS under the conversation after the server's `220` to
    /// STARTTLS. Fails if the server already sent more (which an attacker
    /// could have put there before encryption started).
    func startTLS(context: NIOSSLContext, serverHostname: String?) async throws(SMTPConnectionEnding) {
        let channel = self.channel
        let decoder = self.decoder
        let replies = self.replies
        let future: EventLoopFuture<Void> = channel.eventLoop.submit {
            if let ending = replies.value.ending { throw ending }
            guard !decoder.value.hasUnreadInput, !replies.value.hasUnclaimedReplies else {
                throw SMTPConnectionEnding.malformed("more bytes after the reply to STARTTLS, before TLS began")
            }
            let handler = try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
        }
        do {
            try await future.get()
        } catch let ending as SMTPConnectionEnding {
            channel.close(promise: nil)
            throw ending
        } catch is ChannelError {
            throw .closed
        } catch {
            channel.close(promise: nil)
            throw SMTPReplyHandler.ending(for: error)
        }
    }

    /// Writes `command` without waiting for a reply (the polite `QUIT` before closing).
    func send(_ command: String) {
        channel.writeAndFlush(ByteBuffer(string: command + "\r\n"), promise: nil)
    }

    /// Closes the connection and waits until it is closed.
    func close() async {
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }
}
