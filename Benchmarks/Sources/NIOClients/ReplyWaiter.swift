import NIOCore

/// Counts reply bytes and resumes the waiting task once a whole reply is in. Touched only on
/// the channel's loop (the task runs there too).
final class ReplyWaiter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let size: Int
    private var have = 0
    private var waiting: UnsafeContinuation<Void, Never>?

    init(size: Int) { self.size = size }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        have += unwrapInboundIn(data).readableBytes
        if have >= size, let waiting {
            have -= size
            self.waiting = nil
            waiting.resume()
        }
    }

    /// Returns once a whole reply is in (at once if it already is).
    func next() async {
        if have >= size {
            have -= size
            return
        }
        await withUnsafeContinuation { waiting = $0 }
    }
}
