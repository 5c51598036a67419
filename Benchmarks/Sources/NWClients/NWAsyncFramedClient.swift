// The framed-messages scenario through the 2025 API: the same NWProtocolFramer as the classic
// client (`BenchTypeLengthFramer`), as a `Framer` block over TCP in `withNetworkConnection`'s
// scope, whose body runs on the connection's event loop, as a NIO handler does.
import BenchSupport
import Foundation
import Network

extension BenchTypeLengthFramer: FramerProtocol {}

/// One connection, `window` framed messages in flight: the body sends `window` messages of type
/// 7, then answers every message that comes back with a new one.
public final class NWAsyncFramedClient: Sendable {
    let endpoint: NWEndpoint
    let payload: Data
    let window: Int

    public init(host: String, port: Int, size: Int, window: Int) {
        self.endpoint = .hostPort(host: NWEndpoint.Host(host), port: NWEndpoint.Port(rawValue: UInt16(port))!)
        self.payload = Data(repeating: UInt8(ascii: "f"), count: size)
        self.window = window
    }

    public func start(_ control: RunControl) {
        Task {
            do {
                try await withNetworkConnection(
                    to: endpoint, using: { Framer<BenchTypeLengthFramer>({ TCP().noDelay(true) }) }
                ) { connection in
                    let message = NWProtocolFramer.Message(definition: BenchTypeLengthFramer.definition)
                    message["type"] = UInt32(7)
                    for _ in 0..<window { try await connection.send(payload, metadata: message) }
                    repeat {
                        let reply = try await connection.receive()
                        if reply.content.count != payload.count || reply.metadata.message?["type"] as? UInt32 != 7 {
                            control.error()
                        }
                        try await connection.send(payload, metadata: message)
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
