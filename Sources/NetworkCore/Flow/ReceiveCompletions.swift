/// The receives one event of a `ReceiveQueue` completed, in order, with their outcomes.
///
/// Nearly every event completes none or one receive (a message arrives for the receive that
/// waits for it), and this runs once per message: the first completion is kept inline, so only
/// an event that completes several allocates.
package struct ReceiveCompletions<Token>: RandomAccessCollection {
    private var first: (Token, ReceiveOutcome)?
    private var rest: [(Token, ReceiveOutcome)] = []

    package init() {}

    package var startIndex: Int { 0 }
    package var endIndex: Int { first == nil ? 0 : 1 + rest.count }

    package subscript(position: Int) -> (Token, ReceiveOutcome) {
        guard position > 0 else {
            guard position == 0, let first else { preconditionFailure("ReceiveCompletions index \(position) out of range") }
            return first
        }
        return rest[position - 1]
    }

    package mutating func append(_ completion: (Token, ReceiveOutcome)) {
        if first == nil { first = completion } else { rest.append(completion) }
    }

    /// Hands every completion to `body`, in order, the first moved out: iterating the
    /// collection copies it and each completion (a retain of the token and the bytes each).
    package consuming func deliver(_ body: (Token, ReceiveOutcome) -> Void) {
        if let completion = first.take() { body(completion.0, completion.1) }
        for index in rest.indices { body(rest[index].0, rest[index].1) }
    }
}

extension ReceiveCompletions: Sendable where Token: Sendable {}
