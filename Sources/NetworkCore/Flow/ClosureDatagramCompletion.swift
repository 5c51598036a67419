/// A send completion closure given to `Flow.send(_:isComplete:closesWrite:completion:)` on a
/// datagram flow: runs on the event loop, as such completions always did.
final class ClosureDatagramCompletion: FlowDatagramCompletion {
    let body: Flow.SendCompletion

    init(body: @escaping Flow.SendCompletion) {
        self.body = body
    }

    func run(_ error: FlowError?) {
        // Datagram sends never complete early: their tickets are empty (`SendCompletionTicket`).
        body(error, SendCompletionTicket(flow: nil, early: false))
    }

    func deliver(_ batch: FlowDatagramCompletions) {
        batch.runAll()
    }
}
