// The WebSocket echo scenario through the 2025 API: a `WebSocket` block over TCP to the same
// echo server (nio-bench ws-server), in `withNetworkConnection`'s scope, whose body runs on the
// connection's event loop, as a NIO handler does.
import BenchSupport
import Foundation
import Network

/// One connection, `window` binary messages in flight: the body sends `window` messages, then
/// answers every message that comes back with a new one.
public final class NWAsyncWebSocketClient: Sendable {
    let endpoint: NWEndpoint
    let payload: Data
    let window: Int

    public init(host: String, port: Int, size: Int, window: Int) {
        self.endpoint = .url(URL(string: "ws://\(host):\(port)/echo")!)
        self.payload = Data(repeating: UInt8(ascii: "w"), count: size)
        self.window = window
    }

    public func start(_ control: RunControl) {
        Task {
            do {
                try await withNetworkConnection(to: endpoint, using: { WebSocket { TCP().noDelay(true) } }) { connection in
                    for _ in 0..<window { try await connection.send(payload) }
                    repeat {
                        let reply = try await connection.receive()
                        if reply.content.count != payload.count || reply.metadata.opcode != .binary { control.error() }
                        try await connection.send(payload)
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
