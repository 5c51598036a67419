import NIOCore
import NIOPosix

/// One query over UDP on a socket of its own, bound to port 0 so the kernel picks a random
/// source port (together with the random ID that is 32 bits a spoofer must guess). The socket
/// is unconnected and every datagram goes through `DNSResponseFilter`; the first that passes
/// completes the exchange, the socket is closed right after.
enum DNSUDPExchange {
    /// What came back: a full message, or "truncated, ask over TCP".
    enum Reply: Sendable {
        case message(DNSMessage)
        case truncated
    }

    static func run(
        query: DNSMessage, server: SocketAddress, timeout: TimeAmount, group: any EventLoopGroup, sockets: DNSSocketCount
    ) async throws -> Reply {
        guard let question = query.questions.first else { throw DNSResolverError.invalidName("") }
        let eventLoop = group.next()
        let promise = eventLoop.makePromise(of: Reply.self)
        let filter = DNSResponseFilter(id: query.header.id, question: question, server: server)
        let sawMalformedReply = MalformedReplyFlag()
        let localHost = server.protocol == .inet6 ? "::" : "0.0.0.0"
        let channel: any Channel
        do {
            channel = try await DatagramBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    sockets.track(channel)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            Handler(filter: filter, promise: promise, sawMalformedReply: sawMalformedReply))
                    }
                }
                .bind(host: localHost, port: 0).get()
        } catch {
            promise.fail(error)
            throw DNSResolverError.transportFailure("UDP bind: \(error)")
        }
        let timer = eventLoop.scheduleTask(in: timeout) {
            promise.fail(sawMalformedReply.isSet ? DNSResolverError.malformedReply : DNSResolverError.timedOut)
        }
        promise.futureResult.whenComplete { _ in
            timer.cancel()
            channel.close(promise: nil)
        }
        let payload = channel.allocator.buffer(bytes: query.encoded())
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: server, data: payload)).whenFailure { error in
            promise.fail(DNSResolverError.transportFailure("UDP send: \(error)"))
        }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(DNSResolverError.cancelled)
        }
    }

    /// Passes datagrams that `DNSResponseFilter` accepts to the promise; drops the rest.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>

        let filter: DNSResponseFilter
        let promise: EventLoopPromise<Reply>
        let sawMalformedReply: MalformedReplyFlag

        init(filter: DNSResponseFilter, promise: EventLoopPromise<Reply>, sawMalformedReply: MalformedReplyFlag) {
            self.filter = filter
            self.promise = promise
            self.sawMalformedReply = sawMalformedReply
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = Self.unwrapInboundIn(data)
            guard filter.isFromServer(envelope.remoteAddress) else { return }
            let bytes = Array(envelope.data.readableBytesView)
            switch filter.check(bytes) {
            case .accept(let message): promise.succeed(.message(message))
            case .truncated: promise.succeed(.truncated)
            // Dropped (a spoofer must not be able to end the exchange), but remembered.
            case .malformed: sawMalformedReply.set()
            case .ignore: break
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // An ICMP error or a read error on one datagram: keep listening until the timeout,
            // a stray error must not end the exchange early.
        }
    }
}
