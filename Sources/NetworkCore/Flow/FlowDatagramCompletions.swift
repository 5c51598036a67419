/// The completions of datagram sends that one flush (or one failure) settled, in send order,
/// each with its send's result: what `FlowDatagramCompletion.deliver` hands on as one piece.
package struct FlowDatagramCompletions: Sendable {
    package struct Entry: Sendable {
        package var completion: any FlowDatagramCompletion
        package var error: FlowError?

        package init(completion: any FlowDatagramCompletion, error: FlowError?) {
            self.completion = completion
            self.error = error
        }
    }

    package private(set) var entries: [Entry]
    /// The flow they belong to (nil in tests).
    private let flow: Flow?

    package init(_ entries: [Entry], flow: Flow?) {
        self.entries = entries
        self.flow = flow
    }

    /// Runs every completion, in order.
    package func runAll() {
        for entry in entries { entry.completion.run(entry.error) }
    }

    /// Runs every completion, in order, as one of the application's callbacks for the flow: sends
    /// they make wake its event loop once, after the last (`Flow.runCallback`).
    package func runAsCallback() {
        guard let flow else { return runAll() }
        flow.runCallback { runAll() }
    }

    /// Hands the batch on through its first completion (all belong to one flow).
    func deliver() {
        entries.first?.completion.deliver(self)
    }
}
