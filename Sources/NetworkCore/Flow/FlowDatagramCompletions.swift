/// The completions of datagram sends that one write promise (or one failure) settled, in send
/// order: what `FlowDatagramCompletion.deliver` hands on as one piece. It keeps the outbox's
/// entries as they were written and works each result out as it runs them
/// (`DatagramOutbox.result`), so settling a batch copies nothing per datagram.
package struct FlowDatagramCompletions: Sendable {
    private let entries: [DatagramOutbox.Entry]
    private let segment: DatagramOutbox.Segment
    private let holderError: FlowError?

    /// The completions of `segment` of `entries`, its holder's write having ended with `holderError`.
    package init(
        _ entries: [DatagramOutbox.Entry], segment: DatagramOutbox.Segment, holderError: FlowError?
    ) {
        self.entries = entries
        self.segment = segment
        self.holderError = holderError
    }

    /// One completion on its own, with its result.
    init(_ completion: any FlowDatagramCompletion, _ error: FlowError?) {
        self.init(
            [DatagramOutbox.Entry(datagram: nil, completion: completion, error: error)],
            segment: DatagramOutbox.Segment(range: 0..<1, holder: nil), holderError: nil)
    }

    /// Whether there is anything to run.
    package var isEmpty: Bool {
        !entries[segment.range].contains { $0.completion != nil }
    }

    /// Runs every completion, in order.
    package func runAll() {
        for index in segment.range {
            entries[index].completion?.run(
                DatagramOutbox.result(of: index, in: segment, of: entries, holderError: holderError))
        }
    }

    /// Hands the batch on through its first completion (all belong to one flow).
    func deliver() {
        guard let first = entries[segment.range].firstIndex(where: { $0.completion != nil }) else { return }
        entries[first].completion?.deliver(self)
    }
}
