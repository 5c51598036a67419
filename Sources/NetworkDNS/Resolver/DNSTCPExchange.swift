import NIOCore
import NIOPosix

/// One query over TCP (RFC 1035 section 4.2.2, RFC 7766): each message preceded by its 16-bit
/// length. Used when a UDP reply came back truncated.
enum DNSTCPExchange {
    static func run(
        query: DNSMessage, server: SocketAddress, timeout: TimeAmount, group: any EventLoopGroup, sockets: DNSSocketCount
    ) async throws -> DNSMessage {
        guard let question = query.questions.first else { throw DNSResolverError.invalidName("") }
        let eventLoop = group.next()
        let promise = eventLoop.makePromise(of: DNSMessage.self)
        let filter = DNSResponseFilter(id: query.header.id, question: question, server: server)
        let timer = eventLoop.scheduleTask(in: timeout) { promise.fail(DNSResolverError.timedOut) }
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    sockets.track(channel)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Handler(filter: filter, promise: promise))
                    }
                }
                .connect(to: server).get()
        } catch {
            timer.cancel()
            promise.fail(error)
            if let error = error as? DNSResolverError { throw error }
            throw DNSResolverError.transportFailure("TCP connect: \(error)")
        }
        promise.futureResult.whenComplete { _ in
            timer.cancel()
            channel.close(promise: nil)
        }
        let encoded = query.encoded()
        var payload = channel.allocator.buffer(capacity: encoded.count + 2)
        payload.writeInteger(UInt16(truncatingIfNeeded: encoded.count))
        payload.writeBytes(encoded)
        channel.writeAndFlush(payload).whenFailure { error in
            promise.fail(DNSResolverError.transportFailure("TCP send: \(error)"))
        }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(DNSResolverError.cancelled)
        }
    }

    /// Reassembles length-prefixed messages and hands the first matching one to the promise.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        let filter: DNSResponseFilter
        let promise: EventLoopPromise<DNSMessage>
        var framer = DNSStreamFramer()

        init(filter: DNSResponseFilter, promise: EventLoopPromise<DNSMessage>) {
            self.filter = filter
            self.promise = promise
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var incoming = Self.unwrapInboundIn(data)
            framer.append(&incoming)
            while let bytes = framer.nextMessage() {
                switch filter.check(bytes) {
                case .accept(let message):
                    promise.succeed(message)
                    return
                case .malformed, .truncated:
                    // Our answer, on a connection to the server we asked, that cannot be read
                    // (over TCP nothing may be cut off): there is no better one to wait for.
                    promise.fail(DNSResolverError.malformedReply)
                    return
                case .ignore:
                    continue
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(DNSResolverError.transportFailure("TCP connection closed before the answer"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(DNSResolverError.transportFailure("TCP: \(error)"))
            context.close(promise: nil)
        }
    }
}
