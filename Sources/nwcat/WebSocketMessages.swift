import Foundation
import Network

/// nwcat's WebSocket mode (`connect --ws URL`, `listen --ws`): each chunk of standard input is one
/// message (text when it is UTF-8, binary otherwise), each message received is printed, and the
/// end of input closes with 1000.
enum WebSocketMessages {
    /// Puts WebSocket over the parameters' TCP or TLS; pings are answered by the stack.
    static func add(to parameters: NWParameters) {
        let options = NWProtocolWebSocket.Options()
        options.autoReplyPing = true
        parameters.defaultProtocolStack.applicationProtocols.insert(options, at: 0)
    }

    /// The context of a message carrying `data`: text when it is valid UTF-8, binary otherwise.
    static func context(for data: Data) -> NWConnection.ContentContext {
        let opcode: NWProtocolWebSocket.Opcode = String(validating: data, as: UTF8.self) == nil ? .binary : .text
        return NWConnection.ContentContext(identifier: "nwcat", metadata: [NWProtocolWebSocket.Metadata(opcode: opcode)])
    }

    /// The context of the close message nwcat sends when its input ends (1000, normal closure).
    static var closeContext: NWConnection.ContentContext {
        let metadata = NWProtocolWebSocket.Metadata(opcode: .close)
        metadata.closeCode = .protocolCode(.normalClosure)
        return NWConnection.ContentContext(identifier: "nwcat-close", metadata: [metadata])
    }

    /// The WebSocket metadata of a received message, if it has any.
    static func metadata(of context: NWConnection.ContentContext?) -> NWProtocolWebSocket.Metadata? {
        context?.protocolMetadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata
    }

    /// Prints a received message: text messages end with a line break, as typed.
    static func output(_ data: Data, metadata: NWProtocolWebSocket.Metadata?) {
        guard !data.isEmpty else { return }
        Console.output(data)
        if metadata?.opcode == .text && data.last != UInt8(ascii: "\n") { Console.output(Data("\n".utf8)) }
    }

    /// The URL of `connect --ws`, when it is a ws:// or wss:// URL with a host.
    static func url(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            url.host?.isEmpty == false
        else { return nil }
        return url
    }
}
