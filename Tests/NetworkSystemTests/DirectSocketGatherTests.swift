#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import NetworkSystem

/// A segmented send gathered from separate buffers (`DirectSocket.sendDatagram(parts:…)`), as a
/// UDP flow's flush sends its datagrams from where they are: the kernel cuts the whole at the
/// segment size, whatever the parts, and a receiver without UDP_GRO reads each datagram alone.
@Suite("System.DirectSocketGather")
struct DirectSocketGatherTests {
    /// The datagrams `receiver` holds now, each as its bytes.
    static func drain(_ receiver: TestSocket) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(receiver.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count >= 0 else { return datagrams }
            datagrams.append(Array(buffer.prefix(count)))
        }
    }

    /// A connected sender and a bound receiver on IPv4 loopback.
    static func pair() throws -> (sender: TestSocket, receiver: TestSocket, socket: DirectSocket) {
        let receiver = try TestSocket(.inet, datagram: true)
        let port = try receiver.bindLoopback()
        let sender = try TestSocket(.inet, datagram: true)
        try sender.connectLoopback(port: port)
        let socket = try #require(DirectSocket(duplicating: sender.fd))
        return (sender, receiver, socket)
    }

    @Test("parts of one segment size and a shorter last one arrive as one datagram each, in order, with their bytes")
    func gatheredSegments() throws {
        let (sender, receiver, socket) = try Self.pair()
        _ = sender
        let datagrams: [[UInt8]] = (0..<5).map { [UInt8](repeating: UInt8($0 + 1), count: 300) } + [[9, 9, 9]]
        let outcome = datagrams[0].withUnsafeBytes { p0 in
            datagrams[1].withUnsafeBytes { p1 in
                datagrams[2].withUnsafeBytes { p2 in
                    datagrams[3].withUnsafeBytes { p3 in
                        datagrams[4].withUnsafeBytes { p4 in
                            datagrams[5].withUnsafeBytes { p5 in
                                socket.sendDatagram(parts: [p0, p1, p2, p3, p4, p5], segmentSize: 300)
                            }
                        }
                    }
                }
            }
        }
        #expect(outcome == .wrote(1_503))
        usleep(20_000)
        #expect(Self.drain(receiver) == datagrams)
    }

    @Test("more parts than one send may gather fail with EINVAL and send nothing")
    func tooManyParts() throws {
        let (sender, receiver, socket) = try Self.pair()
        _ = sender
        let byte: [UInt8] = [1]
        let outcome = byte.withUnsafeBytes { part in
            socket.sendDatagram(parts: Array(repeating: part, count: DirectSocket.maximumParts + 1), segmentSize: 1)
        }
        #expect(outcome == .failed(EINVAL))
        usleep(20_000)
        #expect(Self.drain(receiver).isEmpty)
    }
}
