import NetworkCore

/// A UDP send's `.contentProcessed` handler as the engine carries it: three words (the handler
/// and its connection), stored inline in the send, so a datagram's completion costs no
/// allocation; the engine settles a flush's worth at once and the connection runs them on its
/// queue in one block.
struct DatagramSendCompletion: FlowDatagramCompletion {
    let handler: @Sendable (NWError?) -> Void
    /// Held until the send completes (as the flow holds a started connection until cancelled).
    let connection: NWConnection

    /// Nil for completions that call nothing (`.idempotent`).
    init?(_ completion: NWConnection.SendCompletion, connection: NWConnection) {
        guard case .contentProcessed(let handler) = completion else { return nil }
        self.handler = handler
        self.connection = connection
    }

    func run(_ error: FlowError?) {
        handler(error.map(NWError.init))
    }

    func deliver(_ batch: FlowDatagramCompletions) {
        connection.deliver(batch)
    }
}
