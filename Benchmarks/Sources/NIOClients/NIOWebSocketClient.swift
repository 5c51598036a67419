// The WebSocket echo scenario on plain SwiftNIO: NIOWebSocket's client upgrader and frame codec
// over TCP to the WebSocket echo server (`NIOWebSocketEchoServer`), binary messages, several in
// flight.
import BenchSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

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
                            // Masked binary frames, as a client must send them.
                            let payload = ByteBuffer(repeating: UInt8(ascii: "w"), count: size)
                            try channel.pipeline.syncOperations.addHandler(
                                EchoWindowHandler(window: window, make: {
                                    WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: payload)
                                }) { echo in
                                    echo.opcode == .binary && echo.fin && echo.data.readableBytes == size
                                })
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
        EchoWindowHandler<WebSocketFrame>.kick(in: channel, control)
    }

    public func close() {
        channel.close(promise: nil)
    }
}
