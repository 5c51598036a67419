import NIOCore
import Testing

@testable import NetworkCore

/// What a ready flow keeps for readers on any thread.
@Suite("Core.FlowReadyFacts")
struct FlowReadyFactsTests {
    @Test("maximumDatagramSize: streams unbounded, UDP over IPv4 and IPv6 less their headers")
    func maximumDatagramSize() throws {
        let v4 = try SocketAddress(ipAddress: "127.0.0.1", port: 9)
        let v6 = try SocketAddress(ipAddress: "::1", port: 9)
        #expect(FlowReadyFacts(local: nil, remote: v4, tlsSession: nil).maximumDatagramSize(transport: .tcp) == Int(UInt32.max))
        #expect(FlowReadyFacts(local: nil, remote: v4, tlsSession: nil).maximumDatagramSize(transport: .udp) == 65_507)
        #expect(FlowReadyFacts(local: nil, remote: v6, tlsSession: nil).maximumDatagramSize(transport: .udp) == 65_527)
    }

    @Test("addresses and the TLS session as given")
    func facts() throws {
        let local = try SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
        let remote = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
        let session = TLSSessionFacts(negotiatedProtocol: "h2", version: 0x0304, peerCertificates: [], serverName: "x")
        let facts = FlowReadyFacts(local: local, remote: remote, tlsSession: session)
        #expect(facts.localAddress == .ipv4(bytes: [127, 0, 0, 1], port: 40_000))
        #expect(facts.remoteAddress == .ipv4(bytes: [127, 0, 0, 1], port: 443))
        #expect(facts.tlsSession?.negotiatedProtocol == "h2")
        #expect(FlowReadyFacts(local: nil, remote: nil, tlsSession: nil).localAddress == nil)
    }

    @Test("the path of a loopback connection runs over the loopback interface")
    func loopbackPath() throws {
        let local = try SocketAddress(ipAddress: "127.0.0.1", port: 40_000)
        let remote = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
        let path = FlowReadyFacts(local: local, remote: remote, tlsSession: nil).pathFacts()
        #expect(path.status == .satisfied)
        #expect(path.interfaces.map(\.type) == [.loopback])
        #expect(path.supportsDNS)
    }
}
