// The WebSocket echo scenario on Network: NWProtocolWebSocket over TCP to a WebSocket echo
// server (nio-bench ws-server), binary messages, several in flight.
import BenchSupport
import Dispatch
import Foundation
import Network

/// One WebSocket connection with `window` binary `size`-byte messages in flight: each message
/// that comes back makes the next one go out; as many receives pending as messages in flight.
public final class NWWebSocketClient: Sendable {
    public let connection: NWConnection
    let queue = DispatchQueue(label: "bench.websocket")
    let payload: Data
    let window: Int
    let context: NWConnection.ContentContext

    public init(host: String, port: Int, size: Int, window: Int) {
        payload = Data(repeating: UInt8(ascii: "w"), count: size)
        self.window = window
        context = NWConnection.ContentContext(
            identifier: "binary", metadata: [NWProtocolWebSocket.Metadata(opcode: .binary)])
        let parameters = tcpParameters()
        let webSocket = NWProtocolWebSocket.Options()
        webSocket.autoReplyPing = true
        parameters.defaultProtocolStack.applicationProtocols.insert(webSocket, at: 0)
        connection = NWConnection(to: .url(URL(string: "ws://\(host):\(port)/echo")!), using: parameters)
        startAndWaitReady([connection], queue: queue)
    }

    public func start(_ control: RunControl) {
        queue.async {
            for _ in 0..<self.window { self.sendOne(control) }
            for _ in 0..<self.window { self.receiveNext(control) }
        }
    }

    private func sendOne(_ control: RunControl) {
        connection.send(content: payload, contentContext: context, completion: .contentProcessed { error in
            if error != nil { control.error() }
        })
    }

    private func receiveNext(_ control: RunControl) {
        connection.receiveMessage { data, context, _, error in
            guard error == nil, data?.count == self.payload.count,
                (context?.protocolMetadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata)?
                    .opcode == .binary
            else {
                control.error()
                control.connectionStopped()
                return
            }
            if control.completed() {
                self.sendOne(control)
                self.receiveNext(control)
            } else {
                control.connectionStopped()
            }
        }
    }

    public func close() {
        connection.cancel()
    }
}
