import NetworkCore

/// A send's completion on a connection with a framer or WebSocket: the `.contentProcessed`
/// handler (if any) and the message metadata of the send's context (the framer's message, or
/// what WebSocket needs of its metadata), which the engine hands to that layer with the
/// message. Unlike `DatagramSendCompletion` it exists for every send, `.idempotent` ones too,
/// since the metadata must reach the framer either way.
final class FramedSendCompletion: FlowDatagramCompletion {
    let handler: (@Sendable (NWError?) -> Void)?
    let connection: NWConnection
    let framerMessage: (any AnyObject & Sendable)?

    init(_ completion: NWConnection.SendCompletion, context: NWConnection.ContentContext, connection: NWConnection) {
        if case .contentProcessed(let handler) = completion { self.handler = handler } else { handler = nil }
        self.connection = connection
        let metadata = context.protocolMetadata
        framerMessage = metadata.first { $0 is NWProtocolFramer.Message }
            ?? metadata.lazy.compactMap { ($0 as? NWProtocolWebSocket.Metadata)?.engineInfo }.first
    }

    func run(_ error: FlowError?) {
        handler?(error.map(NWError.init))
    }

    func deliver(_ batch: FlowDatagramCompletions) {
        connection.deliverCallback(of: connection.flow) { batch.runAll() }
    }
}
