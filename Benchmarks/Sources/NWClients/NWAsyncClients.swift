// The scenarios written against our `Network` module with the 2025 structured-concurrency API
// (NetworkConnection, async send and receive), as an app written for iOS/macOS 26 would: one
// task per connection, each awaiting its send and its receive.
import BenchSupport
import Dispatch
import Foundation
import Network

/// N connections to the echo server, each in its own task and in `withNetworkConnection`'s scope
/// (whose body runs on the connection's event loop): `send`, then `receive(exactly: size)`,
/// and again. Connections are made during the warm-up.
public final class NWAsyncRoundTripClient: Sendable {
    let endpoints: [NWEndpoint]
    let request: Data
    let size: Int

    public init(host: String, port: Int, nports: Int, conns: Int, size: Int) {
        self.size = size
        self.request = Data(repeating: UInt8(ascii: "x"), count: size)
        self.endpoints = (0..<conns).map { i in
            .hostPort(host: NWEndpoint.Host(host), port: NWEndpoint.Port(rawValue: UInt16(port + i % nports))!)
        }
    }

    public func start(_ control: RunControl) {
        for endpoint in endpoints {
            Task {
                do {
                    try await withNetworkConnection(to: endpoint, using: { TCP().noDelay(true) }) { connection in
                        repeat {
                            try await connection.send(request)
                            let reply = try await connection.receive(exactly: size)
                            if reply.content.count != size { control.error() }
                        } while control.completed()
                    }
                } catch {
                    control.error()
                }
                control.connectionStopped()
            }
        }
    }

    public func close() {}
}

/// One connection to the sink, in `withNetworkConnection`'s scope: `chunkSize`-byte sends, each
/// awaited, until the duration is over; then the end of the stream and the sink's 8-byte count.
public func nwAsyncBulk(host: String, port: Int, chunkSize: Int, duration: Double) -> NWBulkResult {
    blockOn {
        let endpoint = NWEndpoint.hostPort(host: NWEndpoint.Host(host), port: NWEndpoint.Port(rawValue: UInt16(port))!)
        let result = Locked<NWBulkResult?>(nil)
        try await withNetworkConnection(to: endpoint, using: { TCP().noDelay(true) }) { connection in
            _ = try await connection.establishmentReport()
            let chunk = Data(repeating: UInt8(ascii: "b"), count: chunkSize)
            let c0 = cpuTimes(), t0 = nowSeconds()
            let deadline = t0 + duration
            repeat {
                try await connection.send(chunk)
            } while nowSeconds() < deadline
            try await connection.send(Data(), endOfStream: true)
            let count = try await connection.receive(exactly: 8).content
            let t1 = nowSeconds(), c1 = cpuTimes()
            let bytes = count.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            result.withLock { $0 = NWBulkResult(bytes: bytes, seconds: t1 - t0, cpuUser: c1.user - c0.user, cpuSys: c1.sys - c0.sys) }
        }
        return result.value!
    }
}

/// One connection of datagrams to the sink, in `withNetworkConnection`'s scope, sending
/// `size`-byte datagrams one by one, each send awaited (the async API has no batch).
public final class NWAsyncDatagramClient: Sendable {
    let endpoint: NWEndpoint
    let datagram: Data

    public init(host: String, port: Int, size: Int) {
        endpoint = .hostPort(host: NWEndpoint.Host(host), port: NWEndpoint.Port(rawValue: UInt16(port))!)
        datagram = Data(repeating: UInt8(ascii: "u"), count: size)
    }

    public func start(_ control: RunControl) {
        Task {
            do {
                try await withNetworkConnection(to: endpoint, using: { UDP() }) { connection in
                    repeat {
                        try await connection.send(datagram)
                    } while control.completed()
                }
            } catch {
                control.error()
            }
            control.connectionStopped()
        }
    }

    public func close() {}
}
