// The WebSocket echo scenario on plain SwiftNIO: NIOWebSocket's client upgrader and frame codec
// over TCP to the WebSocket echo server (`NIOWebSocketEchoServer`), binary messages, several in
// flight.
import BenchSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// After the upgrade: keeps `window` masked binary frames in flight; the answers to one read's
/// frames are written in `channelRead` and flushed in `channelReadComplete` (NIO's idiom).
final class WebSocketEchoClientHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let payload: ByteBuffer
    private let window: Int
    private var control: RunControl?
    private var needsFlush = false

    init(size: Int, window: Int) {
        payload = ByteBuffer(repeating: UInt8(ascii: "w"), count: size)
        self.window = window
    }

    private func frame() -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: payload)
    }

    func kick(_ control: RunControl, context: ChannelHandlerContext) {
        self.control = control
        for _ in 0..<window { context.write(wrapOutboundOut(frame()), promise: nil) }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let received = unwrapInboundIn(data)
        guard let control else { return }
        guard received.opcode == .binary, received.fin, received.data.readableBytes == payload.readableBytes else {
            control.error()
            return
        }
        if control.completed() {
            context.write(wrapOutboundOut(frame()), promise: nil)
            needsFlush = true
        } else {
            self.control = nil
            control.connectionStopped()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        control?.error()
        context.close(promise: nil)
    }
}

/// Sends the upgrade request once the connection is up.
final class WebSocketUpgradeRequester: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    let host: String

    init(host: String) { self.host = host }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        headers.add(name: "Content-Length", value: "0")
        context.write(wrapOutboundOut(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/echo", headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }
}

/// One upgraded WebSocket connection with `window` binary `size`-byte messages in flight.
public final class NIOWebSocketClient: Sendable {
    public let channel: Channel
    let upgraded: EventLoopFuture<Void>

    public init(group: EventLoopGroup, host: String, port: Int, size: Int, window: Int) throws {
        let upgradedPromise = group.next().makePromise(of: Void.self)
        upgraded = upgradedPromise.futureResult
        channel = try ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                var key = [UInt8](repeating: 0, count: 16)
                for index in key.indices { key[index] = .random(in: 0...255) }
                let upgrader = NIOWebSocketClientUpgrader(
                    requestKey: Data(key).base64EncodedString(),
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(WebSocketEchoClientHandler(size: size, window: window))
                            upgradedPromise.succeed()
                        }
                    })
                return channel.eventLoop.makeCompletedFuture {
                    let requester = WebSocketUpgradeRequester(host: "\(host):\(port)")
                    // (The requester stays: it only sends the request, and passes frames on.)
                    let configuration: NIOHTTPClientUpgradeConfiguration = (upgraders: [upgrader], completionHandler: { _ in })
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(withClientUpgrade: configuration)
                    try channel.pipeline.syncOperations.addHandler(requester)
                }
            }
            .connect(host: host, port: port).wait()
        try upgraded.wait()
    }

    public func start(_ control: RunControl) {
        let channel = self.channel
        channel.eventLoop.execute {
            let handler = try! channel.pipeline.syncOperations.handler(type: WebSocketEchoClientHandler.self)
            let context = try! channel.pipeline.syncOperations.context(handlerType: WebSocketEchoClientHandler.self)
            handler.kick(control, context: context)
        }
    }

    public func close() {
        channel.close(promise: nil)
    }
}
