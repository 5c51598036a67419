#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import Testing

@testable import NetworkCore

/// `DatagramReceiveOffload` on a real socket: the kernel's `UDP_GRO` is on afterwards where the
/// system has it (NIO's probe), and reading it back through the socket says so.
@Suite("Engine.DatagramReceiveOffload")
struct DatagramReceiveOffloadTests {
    @Test("enable(on:) turns UDP_GRO and the segment sizes on for a UDP channel")
    func turnsReceiveOffloadOn() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        try await channel.eventLoop.submit {
            DatagramReceiveOffload.enable(on: channel)
        }.get()
        let on = try await channel.getOption(ChannelOptions.datagramReceiveOffload).get()
        // The machines this runs on (Linux 5.0 and later) have UDP_GRO: the probe must find it.
        #expect(System.supportsUDPReceiveOffload)
        #expect(on == System.supportsUDPReceiveOffload)
        try await channel.close()
        try await group.shutdownGracefully()
    }
}
