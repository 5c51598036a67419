/// The completions of datagram sends that one flush (or one failure) settled, in send order,
/// each with its send's result: what `FlowDatagramCompletion.deliver` hands on as one piece.
package struct FlowDatagramCompletions: Sendable {
    package struct Entry: Sendable {
        package var completion: any FlowDatagramCompletion
        package var error: FlowError?
    }

    package private(set) var entries: [Entry]

    package init(_ entries: [Entry]) {
        self.entries = entries
    }

    /// One completion on its own.
    package init(_ completion: any FlowDatagramCompletion, _ error: FlowError?) {
        self.entries = [Entry(completion: completion, error: error)]
    }

    /// Runs every completion, in order.
    package func runAll() {
        for entry in entries { entry.completion.run(entry.error) }
    }

    /// Hands the batch on through its first completion (all belong to one flow).
    func deliver() {
        entries.first?.completion.deliver(self)
    }
}
