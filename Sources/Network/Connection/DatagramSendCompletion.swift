import NetworkCore

/// A UDP send's `.contentProcessed` handler as the engine carries it: three words (the handler
/// and where its connection delivers callbacks), stored inline in the send, so a datagram's
/// completion costs no allocation. The engine settles a flush's worth at once; they run on the
/// connection's queue in one block.
struct DatagramSendCompletion: FlowDatagramCompletion {
    let handler: @Sendable (NWError?) -> Void
    /// (Not the connection: it is weakly referenced, which makes every retain of it slow, and a
    /// send is copied several times on its way.)
    let delivery: CallbackDelivery

    /// Nil for completions that call nothing (`.idempotent`).
    init?(_ completion: NWConnection.SendCompletion, delivery: CallbackDelivery) {
        guard case .contentProcessed(let handler) = completion else { return nil }
        self.handler = handler
        self.delivery = delivery
    }

    func run(_ error: FlowError?) {
        handler(error.map(NWError.init))
    }

    func deliver(_ batch: FlowDatagramCompletions) {
        delivery.deliver { batch.runAsCallback() }
    }
}
