#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NIOEmbedded
import NetworkSync
import PeerSupport
import Testing

@testable import NetworkCore

/// The built-in framers end to end in the engine, as the 2025 API's `TLV` and `Coder` will run
/// them: a flow and a listener whose `FlowConfiguration.framers` list them, over TCP, TLS (PSK,
/// on GnuTLS), UDP and DTLS, on 127.0.0.1.
@Suite("Core.BuiltInFramers", .serialized)
struct BuiltInFramerEndToEndTests {
    /// A framed send's completion carrying its TLV type, as the facade's carries metadata.
    final class Completion: FlowDatagramCompletion {
        let framerMessage: (any AnyObject & Sendable)?
        init(framerMessage: (any AnyObject & Sendable)?) { self.framerMessage = framerMessage }
        func run(_ error: FlowError?) {}
        func deliver(_ batch: FlowDatagramCompletions) { batch.runAll() }
    }

    struct Message: Sendable, Equatable {
        let type: UInt64?
        let body: [UInt8]
    }

    enum Security { case none, psk }

    static func psk() -> FlowTLSConfiguration {
        var settings = FlowTLSConfiguration()
        settings.preSharedKeys = [(key: Array(repeating: 7, count: 32), identity: "framers")]
        settings.cipherSuites = [0x00A8]
        return settings
    }

    static func configuration(
        _ target: FlowTarget, transport: FlowTransportKind, security: Security, framers: [any HostedFramerFactory]
    ) -> FlowConfiguration {
        var configuration = FlowConfiguration(target: target)
        configuration.transport = transport
        configuration.framers = framers
        if security == .psk { configuration.tls = psk() }
        return configuration
    }

    /// Receives one message.
    static func receive(_ flow: Flow) async throws -> Message {
        let outcome = Recorder<DataReceiveOutcome>()
        flow.receive(minimum: 1, maximum: Int.max) { outcome.append($0) }
        let got = try await outcome.wait("a message", timeout: 10) { !$0.isEmpty }[0]
        guard case .data(let data, _, _, let metadata) = got else {
            Issue.record("receive failed: \(got)")
            return Message(type: nil, body: [])
        }
        return Message(type: (metadata as? TLVMetadata)?.type, body: Array(data ?? Data()))
    }

    static func send(_ flow: Flow, _ body: [UInt8], type: UInt64?) {
        flow.send(
            datagram: Data(body), isComplete: true, closesWrite: false,
            completion: Completion(framerMessage: type.map { TLVMetadata(type: $0) }))
    }

    /// A listener on 127.0.0.1 that answers each message with its body, typed `type + 100`
    /// (untyped framings: as it came).
    static func echoListener(_ transport: FlowTransportKind, child: FlowConfiguration) async throws -> (FlowListener, Int) {
        var configuration = FlowListenerConfiguration(transport: transport, port: 0, child: child)
        configuration.localHost = "127.0.0.1"
        let listener = FlowListener(configuration: configuration)
        let ready = AsyncStream<Void>.makeStream()
        listener.start(stateHandler: { if $0 == .ready { ready.continuation.yield() } }) { flow, _ in
            @Sendable func next() {
                flow.receive(minimum: 1, maximum: Int.max) { outcome in
                    guard case .data(let data, _, _, let metadata) = outcome, let data else { return }
                    let type = (metadata as? TLVMetadata).map { $0.type + 100 }
                    send(flow, Array(data), type: type)
                    next()
                }
            }
            flow.observe { if $0 == .ready { next() } }
            flow.start()
        }
        var iterator = ready.stream.makeAsyncIterator()
        _ = await iterator.next()
        return (listener, try #require(listener.port))
    }

    static let bodies: [[UInt8]] = [Array("first".utf8), [], (0..<1_200).map { UInt8(truncatingIfNeeded: $0) }, [42]]

    /// A client and a listener with `framers`: every message comes back whole, with its type.
    func exchange(_ transport: FlowTransportKind, _ security: Security, framers: [any HostedFramerFactory], typed: Bool) async throws {
        let child = Self.configuration(.unix(path: ""), transport: transport, security: security, framers: framers)
        let (listener, port) = try await Self.echoListener(transport, child: child)
        defer { listener.cancel() }
        let flow = Flow(
            configuration: Self.configuration(
                .hostPort(host: "127.0.0.1", port: port, interfaceName: nil), transport: transport, security: security, framers: framers))
        let states = Recorder<FlowConnectionState>()
        flow.observe { states.append($0) }
        flow.start()
        try await states.wait("ready", timeout: 10) { $0.contains(.ready) }
        defer { flow.cancel(force: false) }
        for (index, body) in Self.bodies.enumerated() {
            let type: UInt64? = typed ? UInt64(index * 3) : nil
            Self.send(flow, body, type: type)
            let reply = try await Self.receive(flow)
            #expect(reply == Message(type: type.map { $0 + 100 }, body: body), "message \(index) over \(transport) \(security)")
        }
    }

    @Test("TLV over TCP", arguments: [Security.none, .psk])
    func tlvOverTCP(security: Security) async throws {
        try await exchange(.tcp, security, framers: [TLVFramerFactory()], typed: true)
    }

    @Test("TLV over UDP and DTLS: one message per datagram, a framer per listener peer", arguments: [Security.none, .psk])
    func tlvOverDatagrams(security: Security) async throws {
        try await exchange(.udp, security, framers: [TLVFramerFactory()], typed: true)
    }

    @Test("Coder framing over TCP and TLS (length prefix), and over UDP (a value per datagram, no framer)", arguments: [
        (FlowTransportKind.tcp, Security.none), (.tcp, .psk), (.udp, .none),
    ])
    func coder(transport: FlowTransportKind, security: Security) async throws {
        try await exchange(transport, security, framers: CoderFraming(transport: transport).framers, typed: false)
    }

    @Test("a raw TCP peer's TLV bytes, cut anyhow, come out as the same typed messages")
    func rawPeerBytes() async throws {
        let wire = TLVFramerTests.wire(.tlv, TLVFramerTests.messages)
        let server = try RawTCPServer()
        let flow = Flow(
            configuration: Self.configuration(
                .hostPort(host: "127.0.0.1", port: server.port, interfaceName: nil), transport: .tcp, security: .none,
                framers: [TLVFramerFactory()]))
        let states = Recorder<FlowConnectionState>()
        flow.observe { states.append($0) }
        flow.start()
        try await states.wait("ready", timeout: 10) { $0.contains(.ready) }
        defer { flow.cancel(force: false) }
        let writer = ThreadTask { server.acceptAndWrite(wire, piece: 5) }
        for (type, body) in TLVFramerTests.messages {
            #expect(try await Self.receive(flow) == Message(type: type, body: body))
        }
        try await writer.value
    }
}

/// A TCP socket on 127.0.0.1 that accepts one connection and writes to it in small pieces.
final class RawTCPServer: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        (fd, port) = try #require(loopbackSocket(stream: true))
    }

    deinit { close(fd) }

    func acceptAndWrite(_ bytes: [UInt8], piece: Int) {
        let peer = accept(fd, nil, nil)
        guard peer >= 0 else { return }
        var one: Int32 = 1
        _ = setsockopt(peer, Int32(IPPROTO_TCP), TCP_NODELAY, &one, 4)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + piece, bytes.count)
            _ = bytes[offset..<end].withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            offset = end
            usleep(100)
        }
        // Let the client read everything before the close.
        usleep(500_000)
        close(peer)
    }
}

/// Makes TLV framers and counts those alive and those cleaned up.
struct CountingFramerFactory: HostedFramerFactory {
    final class Counts: Sendable {
        let alive = Lock(0)
        let cleanedUp = Lock(0)
    }

    final class Framer: HostedFramer {
        let inner = TLVFramer(layout: .tlv)
        let counts: Counts
        init(_ counts: Counts) {
            self.counts = counts
            counts.alive.withLock { $0 += 1 }
        }
        deinit { counts.alive.withLock { $0 -= 1 } }
        func start(_ host: FramerHost) -> Bool { inner.start(host) }
        func handleInput(_ host: FramerHost) -> Int { inner.handleInput(host) }
        func handleOutput(_ host: FramerHost, message: (any AnyObject & Sendable)?, length: Int, isComplete: Bool) {
            inner.handleOutput(host, message: message, length: length, isComplete: isComplete)
        }
        func wakeup(_ host: FramerHost) {}
        func stop(_ host: FramerHost) -> Bool { true }
        func cleanup(_ host: FramerHost) { counts.cleanedUp.withLock { $0 += 1 } }
    }

    let counts = Counts()
    var label: String { "Counting" }
    func makeFramer(host: FramerHost) -> any HostedFramer { Framer(counts) }
}

@Suite("Core.FramedDatagramPeers", .serialized)
struct FramedDatagramPeerTests {
    @Test("an unstarted framed peer keeps what its framer buffers within the peer's receive bound, and lets it go when dropped")
    func unstartedPeerIsBounded() throws {
        let channel = EmbeddedChannel()
        let factory = CountingFramerFactory()
        var configuration = FlowConfiguration(target: .unix(path: ""))
        configuration.framers = [factory]
        let released = Lock(false)
        var flow: Flow? = Flow(
            sharedDatagramChannel: channel, remote: try SocketAddress(ipAddress: "127.0.0.1", port: 9), configuration: configuration
        ) { released.withLock { $0 = true } }
        // Whole TLV messages, 8 KiB each: the framer is not started, so they wait in its input.
        let datagram = ByteBuffer(bytes: TLVFramerTests.wire(.tlv, [(1, [UInt8](repeating: 7, count: 8_192 - 8))]))
        var accepted = 0
        for _ in 0..<200 where flow?.deliverSharedDatagram(datagram) == true { accepted += 1 }
        #expect(accepted * datagram.readableBytes <= Flow.streamHighWater, "accepted \(accepted) datagrams")
        #expect(accepted >= Flow.streamHighWater / datagram.readableBytes - 1)
        #expect(factory.counts.alive.withLock { $0 } == 0, "no framer made before the flow starts")
        flow = nil
        (channel.eventLoop as? EmbeddedEventLoop)?.run()
        #expect(released.withLock { $0 }, "the peer's slot was given back")
        _ = try? channel.finish()
    }

    @Test("an evicted idle peer's framer is cleaned up and released; the newcomer gets its own")
    func evictedPeerKeepsNoFramer() async throws {
        let factory = CountingFramerFactory()
        var child = FlowConfiguration(target: .unix(path: ""))
        child.framers = [factory]
        var configuration = FlowListenerConfiguration(transport: .udp, port: 0, child: child)
        configuration.localHost = "127.0.0.1"
        configuration.datagramPeerLimits.maximumPeers = 1
        configuration.datagramPeerLimits.idleBeforeEviction = .milliseconds(300)
        let listener = FlowListener(configuration: configuration)
        let flows = Lock<[Flow]>([])
        let failures = Recorder<FlowError>()
        let messages = Recorder<UInt64>()
        let ready = AsyncStream<Void>.makeStream()
        listener.start(stateHandler: { if $0 == .ready { ready.continuation.yield() } }) { flow, _ in
            flows.withLock { $0.append(flow) }
            flow.observe { state in
                if case .failed(let error) = state { failures.append(error) }
                if state == .ready {
                    flow.receive(minimum: 1, maximum: Int.max) { outcome in
                        if case .data(_, _, _, let metadata) = outcome, let type = (metadata as? TLVMetadata)?.type { messages.append(type) }
                    }
                }
            }
            flow.start()
        }
        var iterator = ready.stream.makeAsyncIterator()
        _ = await iterator.next()
        let port = try #require(listener.port)
        defer { listener.cancel() }

        let first = try UDPSender()
        let second = try UDPSender()
        let wire = { (type: UInt64) in TLVFramerTests.wire(.tlv, [(type, [1, 2])]) }
        first.send(wire(1), to: port)
        try await messages.wait("the first peer's message") { $0 == [1] }
        #expect(factory.counts.alive.withLock { $0 } == 1)
        // The table notices activity lazily (`DatagramPeerTable`): the newcomer's datagrams are
        // dropped, as UDP may drop them, until the first peer has been seen idle long enough.
        for _ in 0..<20 where messages.count < 2 {
            second.send(wire(2), to: port)
            try await Task.sleep(for: .milliseconds(200))
        }
        try await messages.wait("the second peer's message") { $0 == [1, 2] }
        let failed = try await failures.wait("the idle peer evicted") { !$0.isEmpty }
        #expect(failed == [.posix(ECONNABORTED)])
        // The evicted peer's flow is still referenced here; its framer must not be.
        try await Task.sleep(for: .milliseconds(100))
        #expect(factory.counts.cleanedUp.withLock { $0 } == 1, "the evicted peer's framer was cleaned up")
        #expect(factory.counts.alive.withLock { $0 } == 1, "only the newcomer's framer is alive")
        #expect(flows.withLock { $0.count } == 2)
        for flow in flows.withLock({ $0 }) { flow.cancel(force: false) }
    }
}

/// A UDP socket on 127.0.0.1 that sends datagrams.
final class UDPSender: @unchecked Sendable {
    let fd: Int32

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8], to port: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }
}
