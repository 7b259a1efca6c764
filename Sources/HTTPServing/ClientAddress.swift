import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Who sent a request, as far as this server can tell: the address that
/// counts wrong passwords (`PasswordAttempts`).
///
/// It is the connection's peer; or, when the peer is this machine (a
/// reverse proxy in front, as `deploy/nginx.conf`), the last address of the
/// request's `X-Forwarded-For`, which is the one that proxy saw (earlier
/// ones are the client's own word). An IPv6 address counts by its /64
/// network, which one household or one attacker holds whole.
package enum ClientAddress {
    /// Where `ClientAddressStamp` writes it in the request's head.
    package static let field = HTTPField.Name("Vinylogue-Client-Address")!
    package static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The address of a request from `peer` that says `forwardedFor`.
    package static func of(peer: String?, forwardedFor: [String]) -> String {
        guard let peer else { return "local" }
        if isLoopback(peer), let proxied = forwardedFor.joined(separator: ",").split(separator: ",").last {
            let address = proxied.trimmingCharacters(in: .whitespaces)
            if !address.isEmpty, address.count <= 100 { return address }
        }
        return peer
    }

    package static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.lowercased().hasPrefix("::ffff:127.")
    }

    /// What wrong passwords are counted under: the address, or an IPv6
    /// address's first four groups (its /64), written out in full.
    package static func key(_ address: String) -> String {
        guard address.contains(":"), !address.lowercased().hasPrefix("::ffff:") else { return address }
        let halves = address.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false).map {
            $0.split(separator: ":", omittingEmptySubsequences: true).map(String.init)
        }
        var groups = halves[0]
        if halves.count == 2 { groups += Array(repeating: "0", count: max(0, 8 - halves[0].count - halves[1].count)) + halves[1] }
        guard groups.count >= 4 else { return address }
        return groups.prefix(4).map { String(Int($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":") + "::/64"
    }
}

/// Writes who sent each request into its head (`ClientAddress.field`),
/// replacing any header of that name the client sent, so that a client
/// cannot choose the address it is counted under.
package final class ClientAddressStamp: ChannelInboundHandler, RemovableChannelHandler {
    package init() {}

    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let address = ClientAddress.of(peer: context.channel.remoteAddress?.ipAddress,
                                       forwardedFor: head.headerFields[values: ClientAddress.forwardedFor])
        head.headerFields[ClientAddress.field] = address
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
