import Foundation
import Network
import PeerSupport
import Testing

/// What the WebSocket tests share: parameters, connecting, and messages with their metadata.
enum WebSocketPeer {
    /// One received message.
    struct Received: Sendable {
        let data: Data?
        let opcode: NWProtocolWebSocket.Opcode?
        let closeCode: NWProtocolWebSocket.CloseCode?
        let isComplete: Bool
        let error: NWError?

        var text: String? { data.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// `base` (TCP by default) with WebSocket options on top, set up by `configure`.
    static func parameters(
        _ base: NWParameters = .tcp, _ configure: (NWProtocolWebSocket.Options) -> Void = { _ in }
    ) -> NWParameters {
        let options = NWProtocolWebSocket.Options()
        configure(options)
        base.defaultProtocolStack.applicationProtocols.insert(options, at: 0)
        return base
    }

    /// A connection to `url`, started; it returns once the connection left `preparing`.
    static func connect(_ url: String, _ parameters: NWParameters) async throws -> (NWConnection, NWConnection.State?) {
        let connection = NWConnection(to: .url(try #require(URL(string: url))), using: parameters)
        return (connection, await TLSInteropTests.settle(connection, queue: DispatchQueue(label: "ws-client")))
    }

    static func receive(_ connection: NWConnection, timeout: Double = 20) async throws -> Received {
        let received = Recorder<Received>()
        connection.receiveMessage { data, context, isComplete, error in
            let metadata = context?.protocolMetadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata
            received.append(
                Received(data: data, opcode: metadata?.opcode, closeCode: metadata?.closeCode, isComplete: isComplete, error: error))
        }
        return try await received.wait(count: 1, "a WebSocket message", timeout: timeout)[0]
    }

    /// A context whose metadata says `opcode` (and `closeCode` for a close).
    static func context(_ opcode: NWProtocolWebSocket.Opcode, closeCode: NWProtocolWebSocket.CloseCode? = nil) -> NWConnection.ContentContext {
        let metadata = NWProtocolWebSocket.Metadata(opcode: opcode)
        if let closeCode { metadata.closeCode = closeCode }
        return NWConnection.ContentContext(identifier: "ws-\(opcode)", metadata: [metadata])
    }

    /// Sends `data` as one message; returns the send's error.
    @discardableResult
    static func send(
        _ connection: NWConnection, _ data: Data?, context: NWConnection.ContentContext = .defaultMessage, isComplete: Bool = true
    ) async throws -> NWError? {
        let done = Recorder<NWError?>()
        connection.send(content: data, contentContext: context, isComplete: isComplete, completion: .contentProcessed { done.append($0) })
        return try await done.wait(count: 1, "a send completion")[0]
    }

    /// The listener's connections echo every message with its opcode until a close or an error;
    /// each message's opcode and close code is recorded in `seen`.
    static func echoListener(
        _ parameters: NWParameters, seen: Recorder<Received> = Recorder()
    ) async throws -> (NWListener, UInt16) {
        let queue = DispatchQueue(label: "ws-listener")
        let listener = try NWListener(using: parameters)
        listener.newConnectionHandler = { connection in
            @Sendable func next() {
                connection.receiveMessage { data, context, isComplete, error in
                    let metadata = context?.protocolMetadata(definition: NWProtocolWebSocket.definition) as? NWProtocolWebSocket.Metadata
                    seen.append(Received(data: data, opcode: metadata?.opcode, closeCode: metadata?.closeCode, isComplete: isComplete, error: error))
                    guard error == nil, let metadata, metadata.opcode != .close else { return }
                    connection.send(content: data, contentContext: Self.context(metadata.opcode), completion: .contentProcessed { _ in })
                    next()
                }
            }
            connection.start(queue: queue)
            next()
        }
        return (listener, try await TLSInteropTests.start(listener, queue: queue))
    }

    /// A deterministic payload of `count` bytes.
    static func payload(_ count: Int) -> Data {
        // One 251-byte period, doubled up to `count` (a byte-by-byte `map` of 16 MiB held a
        // cooperative thread for seconds in a debug build, stalling other suites' tests).
        var data = Data((0..<min(count, 251)).map { UInt8($0) })
        while data.count < count { data.append(data.prefix(count - data.count)) }
        return data
    }
}
