import NIOCore
import NIOWebSocket
import NetworkCore

/// The end of the WebSocket fuzz body's pipeline: runs each decoded frame through a client's
/// `WebSocketMessageAssembler`, writes down what came out, and checks the assembler's promises
/// (its buffer bound; a parsed close frame encodes back to itself).
final class WebSocketFrameCollector: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    private var assembler: WebSocketMessageAssembler
    private let maximumMessageSize: Int
    var outcomes: [String] = []
    /// A failure or a close ended the stream.
    private(set) var stopped = false

    init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
        self.assembler = WebSocketMessageAssembler(role: .client, maximumMessageSize: maximumMessageSize)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        guard !stopped else { return }
        let action = assembler.frameReceived(
            .init(
                fin: frame.fin, opcode: UInt8(webSocketOpcode: frame.opcode), reservedBits: !frame.reservedBits.isEmpty,
                masked: frame.maskKey != nil, payload: frame.unmaskedData))
        FuzzFailure.check(assembler.bufferedBytes <= maximumMessageSize, "the assembler holds more than a message")
        switch action {
        case .none:
            return
        case .message(let kind, let bytes):
            FuzzFailure.check(bytes.readableBytes <= maximumMessageSize, "a message over the bound came out")
            if kind == .text { FuzzFailure.check(bytes.readableBytesView.isValidUTF8, "text that is not UTF-8 came out") }
            outcomes.append("\(kind) \(Array(bytes.readableBytesView))")
        case .ping(let bytes), .pong(let bytes):
            outcomes.append("\(action) \(bytes.readableBytes)")
        case .close(let payload):
            if payload.reason.readableBytes <= 123 {
                FuzzFailure.check(
                    WebSocketClosePayload.parse(payload.encoded()) == .success(payload), "a close frame does not encode back to itself")
            }
            outcomes.append("close \(payload.code.map(String.init) ?? "none")")
            stopped = true
        case .fail(let failure):
            outcomes.append("fail \(failure.closeCode)")
            stopped = true
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !stopped else { return }
        outcomes.append("decoder error \(error)")
        stopped = true
    }
}
