#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NetworkSystem
import PeerSupport
import Testing

@testable import Network

/// QUIC's packets leave in segmented batches (`UDP_SEGMENT`) where the path takes them, and one
/// by one where it refuses them: aioquic's echo server in a network namespace behind a veth pair
/// with an MTU of 1,300. ngtcp2's path MTU discovery finds that 1,452-byte packets get through
/// (the kernel fragments them: the socket does not forbid it), and the kernel then refuses a
/// segmented send of them (`EMSGSIZE`: a segment larger than the path's packets). It runs alone,
/// after the parallel run (`scripts/test.sh`, `NW_TEST_STRESS=1`), as the lossy-link test does:
/// beside every other suite, the Python peer once fell silent past the idle timeout.
@Suite(
    "Connection.QUICSegmentation", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["NW_TEST_STRESS"] != nil || SanitizerSlowdown.factor > 1,
        "runs alone: scripts/test.sh runs it after the parallel run (NW_TEST_STRESS=1)"))
struct QUICSegmentationTests {
    /// What a two-segment send from a fresh UDP socket to `host:port` gets: nil when it went,
    /// else the errno.
    static func segmentedSendError(to host: String, port: Int) throws -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let socket = try #require(DirectSocket(duplicating: descriptor))
        // Two 1,400-byte datagrams: not QUIC, so the server drops them.
        let bytes = [UInt8](repeating: 0x41, count: 2_800)
        switch bytes.withUnsafeBytes({ socket.sendDatagram($0, segmentSize: 1_400) }) {
        case .wrote: return nil
        case .wouldBlock: return EAGAIN
        case .failed(let code): return code
        }
    }

    @Test("2 MiB echoed whole over a path that refuses segmented sends of full-size packets (MTU 1,300), and over one that takes them",
          arguments: [false, true])
    func echoWithAndWithoutSegmentation(pathSegments: Bool) async throws {
        guard let namespace = TestNamespace.make() else { return }
        defer { namespace.tearDown() }
        let taken = try ShortTool.check(namespace.ip, ["-o", "addr", "show"])
        let subnet = (1...250).shuffled().first { !taken.contains("10.79.\($0).") } ?? 1
        let (theirs, ours) = try namespace.link(addresses: ["10.79.\(subnet).2/24"], to: nil, otherAddresses: ["10.79.\(subnet).1/24"])
        if !pathSegments {
            try ShortTool.check(namespace.ip, ["-n", namespace.name, "link", "set", "dev", theirs, "mtu", "1300"])
            try ShortTool.check(namespace.ip, ["link", "set", "dev", ours, "mtu", "1300"])
        }
        guard let server = try await AioquicServer.start(host: "10.79.\(subnet).2", namespace: namespace) else { return }
        defer { server.stop() }
        // The path does what this case says (else the case would test nothing).
        let refusal = try Self.segmentedSendError(to: "10.79.\(subnet).2", port: server.port)
        #expect(refusal == (pathSegments ? nil : EMSGSIZE), "a segmented send got \(refusal.map { String(cString: strerror($0)) } ?? "through")")

        let (connection, _) = await QUICConnectionTests.echoWhole(size: 2 << 20, seed: 103, host: "10.79.\(subnet).2", server: server)
        connection.cancel()
    }
}
