import NIOCore
import NIOPosix
import PeerSupport
import Testing
@testable import NetworkDNS

/// A UDP DNS server on a real socket whose replies a test scripts: for each query it sends
/// whatever `reply` returns (nothing when nil).
private final class ScriptedServer: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    let reply: @Sendable (DNSMessage) -> DNSMessage?
    let queries = Recorder<DNSMessage>()

    init(reply: @escaping @Sendable (DNSMessage) -> DNSMessage?) {
        self.reply = reply
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        guard let query = try? DNSMessage(decoding: Array(envelope.data.readableBytesView)) else { return }
        queries.append(query)
        guard let answer = reply(query) else { return }
        let buffer = context.channel.allocator.buffer(bytes: answer.encoded())
        context.writeAndFlush(Self.wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: buffer)), promise: nil)
    }

    /// Starts the server on 127.0.0.1 and returns its channel.
    func start() async throws -> any Channel {
        try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(self) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    /// A response to `query` with `code` and, for NOERROR, one A record.
    static func response(to query: DNSMessage, code: DNSResponseCode, address: DNSIPv4Address? = nil, echoQuestion: Bool = true) -> DNSMessage {
        var answers: [DNSResourceRecord] = []
        if let address, let question = query.questions.first {
            answers = [DNSResourceRecord(name: question.name, type: .a, ttl: 60, data: .a(address))]
        }
        return DNSMessage(
            header: DNSHeader(id: query.header.id, isResponse: true, recursionAvailable: true, responseCode: code),
            questions: echoQuestion ? query.questions : [], answers: answers)
    }
}

@Suite("Resolver against scripted servers")
struct ScriptedServerTests {
    /// An old server that answers EDNS queries with FORMERR (and without the question, as
    /// some do): the resolver asks again without the OPT record.
    @Test func retriesWithoutEDNSAfterFORMERR() async throws {
        let server = ScriptedServer { query in
            query.ednsPayloadSize != nil
                ? ScriptedServer.response(to: query, code: .formatError, echoQuestion: false)
                : ScriptedServer.response(to: query, code: .noError, address: DNSIPv4Address(192, 0, 2, 10))
        }
        let channel = try await server.start()
        defer { channel.close(promise: nil) }
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(nameservers: [try #require(channel.localAddress)], timeout: .seconds(2)),
            cache: DNSCache())
        let answer = try await resolver.query("old.example", type: .a)
        #expect(answer.addresses.map(\.description) == ["192.0.2.10"])
        #expect(server.queries.values.map { $0.ednsPayloadSize } == [1232, nil])
    }

    /// SERVFAIL from the first server: the second one is asked; when every server refuses,
    /// the error says so instead of "timed out".
    @Test func movesOnAfterServerFailure() async throws {
        let failing = ScriptedServer { ScriptedServer.response(to: $0, code: .serverFailure) }
        let working = ScriptedServer { ScriptedServer.response(to: $0, code: .noError, address: DNSIPv4Address(192, 0, 2, 20)) }
        let refusing = ScriptedServer { ScriptedServer.response(to: $0, code: .refused) }
        let channels = [try await failing.start(), try await working.start(), try await refusing.start()]
        defer { for channel in channels { channel.close(promise: nil) } }
        let addresses = try channels.map { try #require($0.localAddress) }

        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(nameservers: [addresses[0], addresses[1]], timeout: .seconds(2)),
            cache: DNSCache())
        #expect(try await resolver.query("x.example", type: .a).addresses.map(\.description) == ["192.0.2.20"])

        let hopeless = DNSResolver(
            configuration: DNSResolverConfiguration(nameservers: [addresses[0], addresses[2]], timeout: .seconds(2), attempts: 2),
            cache: DNSCache())
        await #expect(throws: DNSResolverError.serverFailure(.refused)) { try await hopeless.query("x.example", type: .a) }
        #expect(refusing.queries.count == 2)  // one per attempt
    }

    /// Two servers with `rotate`: consecutive queries start at different servers.
    @Test func rotatesServers() async throws {
        let first = ScriptedServer { ScriptedServer.response(to: $0, code: .noError, address: DNSIPv4Address(192, 0, 2, 1)) }
        let second = ScriptedServer { ScriptedServer.response(to: $0, code: .noError, address: DNSIPv4Address(192, 0, 2, 2)) }
        let channels = [try await first.start(), try await second.start()]
        defer { for channel in channels { channel.close(promise: nil) } }
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: try channels.map { try #require($0.localAddress) }, timeout: .seconds(2), rotate: true),
            cache: DNSCache())
        for index in 0..<4 { _ = try await resolver.query("r\(index).example", type: .a) }
        #expect(first.queries.count == 2 && second.queries.count == 2)
    }
}
