import NIOCore
import NIOPosix
import PeerSupport
import Testing
@testable import NetworkDNS

/// A query as the server saw it, with the port it came from.
private struct ReceivedQuery: Sendable {
    let message: DNSMessage
    let sourcePort: Int?
}

/// A hostile UDP "server" on a real socket: for every query it first sends forged replies
/// (wrong ID, wrong name, wrong type, not a response, garbage, right everything but from
/// another port) and only then the genuine one.
private final class SpoofingServer: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    let otherPort: any Channel
    let queries: Recorder<ReceivedQuery>

    init(otherPort: any Channel, queries: Recorder<ReceivedQuery>) {
        self.otherPort = otherPort
        self.queries = queries
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        guard let query = try? DNSMessage(decoding: Array(envelope.data.readableBytesView)),
            let question = query.questions.first
        else { return }
        queries.append(ReceivedQuery(message: query, sourcePort: envelope.remoteAddress.port))
        func reply(id: UInt16, question: DNSQuestion, address: DNSIPv4Address, isResponse: Bool = true) -> ByteBuffer {
            let message = DNSMessage(
                header: DNSHeader(id: id, isResponse: isResponse, recursionAvailable: true), questions: [question],
                answers: [DNSResourceRecord(name: question.name, type: .a, ttl: 60, data: .a(address))])
            return context.channel.allocator.buffer(bytes: message.encoded())
        }
        let forged: [ByteBuffer] = [
            reply(id: query.header.id &+ 1, question: question, address: DNSIPv4Address(6, 6, 6, 1)),
            reply(id: query.header.id, question: DNSQuestion(name: (try? DNSName("evil.test")) ?? .root, type: .a), address: DNSIPv4Address(6, 6, 6, 2)),
            reply(id: query.header.id, question: DNSQuestion(name: question.name, type: .aaaa), address: DNSIPv4Address(6, 6, 6, 3)),
            reply(id: query.header.id, question: DNSQuestion(name: question.name, type: .a, recordClass: DNSClass(rawValue: 3)), address: DNSIPv4Address(6, 6, 6, 4)),
            reply(id: query.header.id, question: question, address: DNSIPv4Address(6, 6, 6, 5), isResponse: false),
            context.channel.allocator.buffer(bytes: [0x12, 0x34, 0xFF, 0xFF, 0xC0]),
        ]
        for buffer in forged {
            context.write(Self.wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: buffer)), promise: nil)
        }
        context.flush()
        // Right ID and question, wrong source port.
        otherPort.writeAndFlush(
            AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: reply(id: query.header.id, question: question, address: DNSIPv4Address(6, 6, 6, 6))),
            promise: nil)
        // The genuine answer, a little later so the forgeries surely arrive first; the name's
        // case differs from the query's (allowed, RFC 4343).
        let genuineQuestion = DNSQuestion(name: (try? DNSName(question.name.description.uppercased())) ?? question.name, type: .a)
        let genuine = reply(id: query.header.id, question: genuineQuestion, address: DNSIPv4Address(10, 9, 9, 9))
        let target = envelope.remoteAddress
        let channel = context.channel
        context.eventLoop.scheduleTask(in: .milliseconds(30)) {
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: genuine), promise: nil)
        }
    }
}

@Suite("Anti-spoofing")
struct AntiSpoofingTests {
    @Test func acceptsOnlyTheMatchingReply() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let other = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let queries = Recorder<ReceivedQuery>()
        let server = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SpoofingServer(otherPort: other, queries: queries))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer {
            server.close(promise: nil)
            other.close(promise: nil)
        }
        let address = try #require(server.localAddress)
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(nameservers: [address], timeout: .seconds(2), attempts: 1), cache: DNSCache())

        var ids: Set<UInt16> = []
        var ports: Set<Int> = []
        for index in 0..<5 {
            let answer = try await resolver.query("host\(index).spoof.test", type: .a)
            #expect(answer.addresses.map(\.description) == ["10.9.9.9"])
            #expect(answer.source == .network)
            let received = try #require(queries.last)
            ids.insert(received.message.header.id)
            ports.insert(try #require(received.sourcePort))
        }
        #expect(queries.count == 5)
        #expect(ids.count >= 4)  // random IDs: five equal-ish draws from 65536 values are unlikely
        #expect(ports.count >= 4)  // a fresh socket, and so a fresh kernel-chosen port, per query
        #expect(try #require(queries.last).message.ednsPayloadSize == 1232)
    }
}
