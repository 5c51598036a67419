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

/// A listener connection's upgrade handshake (RFC 6455 §4.2). It starts when the application
/// starts the connection (`start`), reads the client's request, asks the request handler (or
/// accepts the first offered subprotocol the listener supports), and answers: `101 Switching
/// Protocols`, after which the HTTP codec gives way to the WebSocket one; `403 Forbidden` when
/// the handler rejects; `400 Bad Request` (`426 Upgrade Required` for another version) when the
/// request is no WebSocket upgrade. Those close the connection, which fails with
/// `ECONNREFUSED` or `EPROTO`.
final class WebSocketServerHandshake: ChannelInboundHandler, RemovableChannelHandler, InboundStackLayer, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let configuration: WebSocketConfiguration
    private let codec: (decoder: any RemovableChannelHandler, encoder: any RemovableChannelHandler)
    private let timeout: TimeAmount
    private let done: EventLoopPromise<StackLayerFacts>
    private var context: ChannelHandlerContext?
    private var started = false
    private var request: HTTPRequestHead?
    /// The request was answered (or the handshake failed): later parts are ignored.
    private var answered = false
    private var timer: Scheduled<Void>?
    private var upgraded = false

    init(configuration: WebSocketConfiguration, codec: (decoder: any RemovableChannelHandler, encoder: any RemovableChannelHandler), timeout: TimeAmount, eventLoop: EventLoop) {
        self.configuration = configuration
        self.codec = codec
        self.timeout = timeout
        self.done = eventLoop.makePromise()
    }

    func startLayer() -> EventLoopFuture<StackLayerFacts> {
        guard !started, let context else { return done.futureResult }
        started = true
        timer = context.eventLoop.scheduleTask(in: timeout) { [weak self] in
            guard let self, let context = self.context, !self.answered else { return }
            NetworkLog.connection.debug("websocket: no upgrade request in time")
            self.fail(.posix(ETIMEDOUT), context: context)
        }
        if requestComplete {
            answer(context: context)
        } else {
            context.read()
        }
        return done.futureResult
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
        // (After a successful upgrade `done` completes when the HTTP codec is gone.)
        if !upgraded { done.fail(FlowError.posix(ECANCELED)) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        switch Self.unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            // The decoder's last part: the codec may leave after the answer.
            requestComplete = true
            if started { answer(context: context) }
        }
    }

    /// The request's end arrived (nothing of it is left in the HTTP decoder).
    private var requestComplete = false

    func channelReadComplete(context: ChannelHandlerContext) {
        if started && !answered { context.read() }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        done.fail(FlowError.posix(ECONNRESET))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !answered else { return context.fireErrorCaught(error) }
        reply(.badRequest, failing: .posix(EPROTO), context: context)
    }

    // MARK: - Inside

    private func answer(context: ChannelHandlerContext) {
        guard let request, !answered else { return }
        answered = true
        let headers = request.headers
        guard request.method == .GET, (request.version.major, request.version.minor) >= (1, 1), WebSocketUpgradeHeaders.asksForUpgrade(headers),
            headers[canonicalForm: "sec-websocket-key"].count == 1
        else {
            NetworkLog.connection.debug("websocket: the request is no WebSocket upgrade")
            return reply(.badRequest, failing: .posix(EPROTO), context: context)
        }
        guard headers["sec-websocket-version"] == ["13"] else {
            return reply(.upgradeRequired, failing: .posix(EPROTO), extra: [("Sec-WebSocket-Version", "13")], context: context)
        }
        let offered = WebSocketUpgradeHeaders.subprotocols(headers)
        guard let handler = configuration.requestHandler else {
            let chosen = offered.first(where: configuration.subprotocols.contains)
            return decided(WebSocketServerDecision(accept: true, subprotocol: chosen), request: request, context: context)
        }
        let loop = context.eventLoop
        let allHeaders = headers.map { (name: $0.name, value: $0.value) }
        handler(offered, allHeaders) { [self] decision in
            loop.execute {
                guard let context = self.context else { return }
                self.decided(decision, request: request, context: context)
            }
        }
    }

    private func decided(_ decision: WebSocketServerDecision, request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard decision.accept else {
            NetworkLog.connection.debug("websocket: the application rejected the upgrade")
            return reply(.forbidden, failing: .posix(ECONNREFUSED), context: context)
        }
        var extra = HTTPHeaders()
        if let subprotocol = decision.subprotocol { extra.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        for header in decision.additionalHeaders { extra.add(name: header.name, value: header.value) }
        // NIO's upgrader checks the key and version and computes the accept value (it adds it to
        // the headers `shouldUpgrade` returns).
        let upgrader = NIOWebSocketServerUpgrader(
            shouldUpgrade: { [extra] channel, _ in channel.eventLoop.makeSucceededFuture(extra) },
            upgradePipelineHandler: { channel, _ in channel.eventLoop.makeSucceededVoidFuture() })
        upgrader.buildUpgradeResponse(channel: context.channel, upgradeRequest: request, initialResponseHeaders: HTTPHeaders())
            .whenComplete { [self] result in
                guard let context = self.context else { return }
                switch result {
                case .success(let headers):
                    self.upgrade(headers: headers, subprotocol: decision.subprotocol, request: request, context: context)
                case .failure:
                    self.reply(.badRequest, failing: .posix(EPROTO), context: context)
                }
            }
    }

    private func upgrade(headers: HTTPHeaders, subprotocol: String?, request: HTTPRequestHead, context: ChannelHandlerContext) {
        timer?.cancel()
        upgraded = true
        context.writeAndFlush(Self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: headers))), promise: nil)
        let facts = StackLayerFacts(
            webSocket: WebSocketHandshakeFacts(subprotocol: subprotocol, headers: WebSocketUpgradeHeaders.additional(request.headers)))
        do {
            let done = self.done
            try WebSocketStack.switchToFrames(after: self, context: context, role: .server, configuration: configuration, httpCodec: codec)
                .whenComplete { result in done.completeWith(result.map { facts }) }
        } catch {
            return fail(FlowError(error), context: context)
        }
    }

    private func reply(
        _ status: HTTPResponseStatus, failing error: FlowError, extra: [(String, String)] = [], context: ChannelHandlerContext
    ) {
        answered = true
        timer?.cancel()
        var headers = HTTPHeaders(extra)
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "Connection", value: "close")
        context.write(Self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        done.fail(error)
    }

    private func fail(_ error: FlowError, context: ChannelHandlerContext) {
        answered = true
        done.fail(error)
        context.close(promise: nil)
    }
}
