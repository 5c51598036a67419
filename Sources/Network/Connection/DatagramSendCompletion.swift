import NetworkCore

/// A UDP send's `.contentProcessed` handler as the engine carries it, with the connection that
/// delivers the callbacks. The engine settles a flush's worth at once; they run on the
/// connection's queue in one block.
final class DatagramSendCompletion: FlowDatagramCompletion {
    let handler: @Sendable (NWError?) -> Void
    /// (Held strongly: a connection the application references weakly has a side table, which
    /// makes every retain of it a little slower. A delivery object of its own, instead of the
    /// connection, cost every connection a malloc chunk, which was worse.)
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
        connection.deliverCallback(of: connection.flow) { batch.runAll() }
    }
}
