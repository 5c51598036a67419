import NetworkCore

/// A send's completion on a connection with a framer: the `.contentProcessed` handler (if any)
/// and the framer metadata of the send's context, which the engine hands to the framer with the
/// message. Unlike `DatagramSendCompletion` it exists for every send, `.idempotent` ones too,
/// since the metadata must reach the framer either way.
struct FramedSendCompletion: FlowDatagramCompletion {
    let handler: (@Sendable (NWError?) -> Void)?
    let connection: NWConnection
    let framerMessage: (any AnyObject & Sendable)?

    init(_ completion: NWConnection.SendCompletion, context: NWConnection.ContentContext, connection: NWConnection) {
        if case .contentProcessed(let handler) = completion { self.handler = handler } else { handler = nil }
        self.connection = connection
        framerMessage = context.protocolMetadata.first { $0 is NWProtocolFramer.Message }
    }

    func run(_ error: FlowError?) {
        handler?(error.map(NWError.init))
    }

    func deliver(_ batch: FlowDatagramCompletions) {
        connection.deliver { batch.runAsCallback() }
    }
}
