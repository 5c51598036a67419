#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NetworkDNS
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// A client's upgrade handshake (RFC 6455 §4.1), once the layers below are up: sends the GET with
/// the key, the subprotocols and the application's headers, reads the response, and on a valid
/// `101 Switching Protocols` replaces the HTTP codec with the WebSocket one and this handler with
/// `WebSocketMessageHandler`. `done` succeeds with what the server settled, or fails: with
/// `ECONNREFUSED` when the server answered with another status, `EPROTO` when the 101 is not a
/// valid WebSocket answer (wrong accept value, a subprotocol we did not offer).
final class WebSocketClientHandshake: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let configuration: WebSocketConfiguration
    private let host: String
    private let codec: (decoder: any RemovableChannelHandler, encoder: any RemovableChannelHandler)
    private let key = NIOWebSocketClientUpgrader.randomRequestKey()
    let done: EventLoopPromise<WebSocketHandshakeFacts>
    private var finished = false

    init(
        configuration: WebSocketConfiguration, host: String, codec: (decoder: any RemovableChannelHandler, encoder: any RemovableChannelHandler),
        eventLoop: EventLoop
    ) {
        self.configuration = configuration
        self.host = host
        self.codec = codec
        self.done = eventLoop.makePromise()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Upgrade", value: "websocket")
        headers.add(name: "Connection", value: "Upgrade")
        headers.add(name: "Sec-WebSocket-Key", value: key)
        headers.add(name: "Sec-WebSocket-Version", value: "13")
        if !configuration.subprotocols.isEmpty {
            headers.add(name: "Sec-WebSocket-Protocol", value: configuration.subprotocols.joined(separator: ", "))
        }
        for header in configuration.additionalHeaders { headers.add(name: header.name, value: header.value) }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: configuration.requestTarget, headers: headers)
        context.write(Self.wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch Self.unwrapInboundIn(data) {
        case .head(let response):
            guard response.status == .switchingProtocols else {
                NetworkLog.connection.debug("websocket: server answered the upgrade with \(response.status.code)")
                return fail(.posix(ECONNREFUSED), context: context)
            }
            self.response = response
        case .body:
            break
        case .end:
            // The decoder's last part: the codec may leave now.
            guard let response else { return fail(.posix(EPROTO), context: context) }
            upgrade(response, context: context)
        }
    }

    private var response: HTTPResponseHead?

    private func upgrade(_ response: HTTPResponseHead, context: ChannelHandlerContext) {
        finished = true
        let offered = configuration.subprotocols
        let chosen = WebSocketUpgradeHeaders.subprotocols(response.headers)
        let validAccept = NIOWebSocketClientUpgrader(requestKey: key) { channel, _ in channel.eventLoop.makeSucceededVoidFuture() }
            .shouldAllowUpgrade(upgradeResponse: response)
        guard validAccept, WebSocketUpgradeHeaders.asksForUpgrade(response.headers),
            chosen.count <= 1, chosen.allSatisfy(offered.contains)
        else {
            NetworkLog.connection.debug("websocket: the server's 101 is not a valid WebSocket answer")
            return fail(.posix(EPROTO), context: context)
        }
        let facts = WebSocketHandshakeFacts(subprotocol: chosen.first, headers: WebSocketUpgradeHeaders.additional(response.headers))
        do {
            let done = self.done
            try WebSocketStack.switchToFrames(after: self, context: context, role: .client, configuration: configuration, httpCodec: codec)
                .whenComplete { result in done.completeWith(result.map { facts }) }
        } catch {
            return fail(FlowError(error), context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !finished { context.read() }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(FlowError.posix(ECONNRESET))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reply that is not HTTP at all.
        fail(error is HTTPParserError ? .posix(EPROTO) : FlowError(error), context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // (After a successful upgrade `done` completes when the HTTP codec is gone.)
        if !finished { done.fail(FlowError.posix(ECANCELED)) }
    }

    private func fail(_ error: FlowError, context: ChannelHandlerContext) {
        finished = true
        done.fail(error)
        context.close(promise: nil)
    }
}
