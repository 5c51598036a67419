// The WebSocket echo scenario on Network: NWProtocolWebSocket over TCP to a WebSocket echo
// server (nio-bench ws-server), binary messages, several in flight.
import BenchSupport
import Foundation
import Network

/// The ws scenario's client: `window` binary `size`-byte WebSocket messages in flight on a
/// `ws://` URL endpoint.
public func makeNWWebSocketClient(host: String, port: Int, size: Int, window: Int) -> NWMessageEchoClient {
    let parameters = tcpParameters()
    let webSocket = NWProtocolWebSocket.Options()
    webSocket.autoReplyPing = true
    parameters.defaultProtocolStack.applicationProtocols.insert(webSocket, at: 0)
    return NWMessageEchoClient(
        connection: NWConnection(to: .url(URL(string: "ws://\(host):\(port)/echo")!), using: parameters),
        label: "bench.websocket", payload: Data(repeating: UInt8(ascii: "w"), count: size), window: window,
        context: NWConnection.ContentContext(identifier: "binary", metadata: [NWProtocolWebSocket.Metadata(opcode: .binary)])
    ) { context in
        (context?.protocolMetadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata)?.opcode == .binary
    }
}
