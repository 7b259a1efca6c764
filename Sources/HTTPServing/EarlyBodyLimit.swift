import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// How large a request body each address takes, and what it says to one
/// that announces more: the same limits the routes apply as they read,
/// known here from the request's head alone. Each face of the server
/// names its own addresses' limits (`routes`); every other POST is a form.
package struct BodyLimits: Sendable {
    /// What an over-long request is told, with status 413.
    package struct Refusal: Sendable {
        package let contentType: String
        package let body: String

        package init(contentType: String, body: String) {
            self.contentType = contentType
            self.body = body
        }
    }

    /// One address's limit, and its refusal for the request's path and
    /// query (Last.fm's API answers in the format the query asks for).
    package struct Limit: Sendable {
        package let bytes: Int
        package let refusal: @Sendable (_ path: String) -> Refusal

        package init(bytes: Int, refusal: @escaping @Sendable (_ path: String) -> Refusal) {
            self.bytes = bytes
            self.refusal = refusal
        }
    }

    /// The limit of every form (settings, the users list, sign-in).
    package let forms: Int
    /// The addresses that take more (or less) than a form, by route.
    package let routes: [String: Limit]

    package init(forms: Int, routes: [String: Limit] = [:]) {
        self.forms = forms
        self.routes = routes
    }

    /// The most `request` may send and what to say when it announces more;
    /// nil when the address takes no body worth limiting here.
    package func limit(for request: HTTPRequest) -> (bytes: Int, refusal: Refusal)? {
        guard request.method == .post else { return nil }
        let path = request.path ?? "/"
        // As the router reads it: empty segments (`//`, a trailing `/`) do
        // not count, so `/1//submit-listens/` is `/1/submit-listens`.
        let segments = (path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .split(separator: "/")
        let route = "/" + segments.joined(separator: "/")
        if let limit = routes[route] { return (limit.bytes, limit.refusal(path)) }
        return (forms, Refusal(contentType: "text/plain; charset=utf-8",
                               body: "The form was too large: a form here takes at most \(forms) bytes. Go back and send less.\n"))
    }
}

/// Answers from a request's head what its body would be answered later:
/// a `Content-Length` over the address's limit gets 413 at once, before a
/// byte of the body is read (a player announcing 999,999,999 bytes used to
/// wait for the idle timeout, and curl's 20 MB upload was read whole only
/// to be refused). A request that says `Expect: 100-continue` and may send
/// its body is told `100 Continue`, as clients such as curl wait for.
///
/// After a refusal the connection's output is closed and whatever body
/// still arrives is dropped unread, so a client that did not wait still
/// reads the 413 (closing at once can reset the connection under it); the
/// idle timeout ends the connection if the client never does. Requests
/// pipelined on one connection are answered in order: a refusal or a
/// `100 Continue` waits until every request ahead of it is answered.
package final class EarlyBodyLimit: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let limits: BodyLimits
    /// The requests passed on whose responses have not ended, oldest
    /// first, each with whether it waits for `100 Continue`. Pipelined
    /// requests arrive before the answers to those ahead of them: what
    /// this handler says must wait its turn.
    private var unanswered: [Bool] = []
    /// The refusal due once every request ahead of it is answered.
    private var refusal: BodyLimits.Refusal?
    /// A refused request's body (and anything after it) is being dropped.
    private var refused = false

    package init(limits: BodyLimits) {
        self.limits = limits
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if let (limit, refusal) = limits.limit(for: head), let announced = head.headerFields[.contentLength],
           Self.exceeds(announced, limit) {
            refused = true
            if unanswered.isEmpty { refuse(refusal, context: context) } else { self.refusal = refusal }
            return
        }
        let expectsContinue = head.headerFields[.expect].map(Self.asksToContinue) ?? false
        if expectsContinue {
            // Answered here: the routes never see the expectation.
            head.headerFields[.expect] = nil
            if unanswered.isEmpty { sendContinue(context) }
        }
        unanswered.append(expectsContinue && !unanswered.isEmpty)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ended: Bool
        if case .end = unwrapOutboundIn(data) { ended = true } else { ended = false }
        context.write(data, promise: promise)
        guard ended, !unanswered.isEmpty else { return }
        unanswered.removeFirst()
        // The next request's turn: its 100 Continue, or the refusal.
        if let next = unanswered.first, next {
            unanswered[0] = false
            sendContinue(context)
        } else if unanswered.isEmpty, let refusal {
            self.refusal = nil
            refuse(refusal, context: context)
        }
    }

    /// Whether an `Expect` value (one header, or several joined by commas)
    /// asks for `100-continue`.
    package static func asksToContinue(_ value: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "100-continue" }
    }

    private func sendContinue(_ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
    }

    /// Whether a `Content-Length` value says more than `limit` bytes (one
    /// too large for an `Int` does).
    package static func exceeds(_ announced: String, _ limit: Int) -> Bool {
        let digits = announced.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
        guard let length = Int(digits) else { return true }
        return length > limit
    }

    private func refuse(_ refusal: BodyLimits.Refusal, context: ChannelHandlerContext) {
        let body = context.channel.allocator.buffer(string: refusal.body)
        var response = HTTPResponse(status: .contentTooLarge)
        response.headerFields[.contentType] = refusal.contentType
        response.headerFields[.contentLength] = String(body.readableBytes)
        response.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        written.futureResult.whenComplete { _ in context.close(mode: .output, promise: nil) }
    }
}
