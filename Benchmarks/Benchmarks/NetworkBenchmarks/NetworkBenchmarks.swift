// package-benchmark suite: `swift package benchmark` (from Benchmarks/).
//
// The same client drivers as the nio-bench / nw-bench executables (Sources/NIOClients,
// Sources/NWClients), measured inside package-benchmark with its metrics (wall clock, throughput,
// mallocs), one operation = one round trip or one datagram (scalingFactor .kilo: each
// iteration is 1,000 operations; results are per operation).
//
// The peer is a small in-process SwiftNIO server (echo on NETBENCH_PORT, default 19500; UDP sink on
// NETBENCH_PORT+200) on its own one-thread event loop group, so the suite runs by itself; its
// allocations are counted too, equally for both clients. With NETBENCH_EXTERNAL_SERVER=1 the suite
// uses an already running C/server.c on NETBENCH_PORT instead (what run.sh compares against).
// Cross-language numbers (C vs NIO vs Network) come from run.sh, not from this suite.
import Benchmark
import BenchSupport
import Foundation
import NIOClients
import NIOCore
import NIOPosix
import NWClients

let env = ProcessInfo.processInfo.environment
let basePort = Int(env["NETBENCH_PORT"] ?? "") ?? 19500
let externalServer = env["NETBENCH_EXTERNAL_SERVER"] == "1"
let host = "127.0.0.1"

// MARK: In-process peer

final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.write(data, promise: nil) }
    func channelReadComplete(context: ChannelHandlerContext) { context.flush() }
    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
}

final class DiscardHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

final class Peer: Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channels: [Channel]

    init() throws {
        let echo = try ServerBootstrap(group: self.group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
            }
            .bind(host: host, port: basePort).wait()
        let udp = try DatagramBootstrap(group: self.group)
            .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(DiscardHandler()) }
            }
            .bind(host: host, port: basePort + 200).wait()
        self.channels = [echo, udp]
    }
}

let peer: Peer? = externalServer ? nil : (try! Peer())

// MARK: Suite

let benchmarks: @Sendable () -> Void = {
    _ = peer
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )
    let group = MultiThreadedEventLoopGroup.singleton

    // Round trips: 64-byte request, 64-byte echo, one in flight per connection.
    for conns in [1, 100] {
        nonisolated(unsafe) var nio: NIORoundTripClient?
        Benchmark("rr\(conns) 64B round trip NIO") { benchmark in
            nio!.run(roundTrips: benchmark.scaledIterations.count)
        } setup: {
            nio = try NIORoundTripClient(group: group, host: host, port: basePort, nports: 1, conns: conns, size: 64)
        } teardown: {
            nio?.close(); nio = nil
        }

        nonisolated(unsafe) var nw: NWRoundTripClient?
        Benchmark("rr\(conns) 64B round trip Network") { benchmark in
            nw!.run(roundTrips: benchmark.scaledIterations.count)
        } setup: {
            nw = NWRoundTripClient(host: host, port: basePort, nports: 1, conns: conns, size: 64)
        } teardown: {
            nw?.close(); nw = nil
        }
    }

    // UDP: 64-byte datagrams in groups of 64, one send each or one batch (NIO: write*64 + flush;
    // Network: connection.batch { send*64 }).
    for batched in [false, true] {
        let label = batched ? "batch" : "single"
        nonisolated(unsafe) var nio: NIODatagramClient?
        Benchmark("udp64 \(label) NIO") { benchmark in
            nio!.run(datagrams: benchmark.scaledIterations.count)
        } setup: {
            nio = try NIODatagramClient(group: group, host: host, port: basePort + 200, size: 64, group: 64, batched: batched)
        } teardown: {
            nio?.close(); nio = nil
        }

        nonisolated(unsafe) var nw: NWDatagramClient?
        Benchmark("udp64 \(label) Network") { benchmark in
            nw!.run(datagrams: benchmark.scaledIterations.count)
        } setup: {
            nw = NWDatagramClient(host: host, port: basePort + 200, size: 64, group: 64, batched: batched)
        } teardown: {
            nw?.close(); nw = nil
        }
    }
}
