import NetworkCore

/// A message send's completion as the engine carries it for an async send: it resumes the
/// sending task directly from the flow's event loop (a flush's completions run together,
/// in send order), and carries the message's layer metadata (a TLV type, a framer message,
/// a WebSocket kind) to the framer.
final class ChannelSendCompletion: FlowDatagramCompletion {
    let continuation: ChannelContinuation<Void>?
    let framerMessage: (any AnyObject & Sendable)?

    init(continuation: ChannelContinuation<Void>?, framerMessage: (any AnyObject & Sendable)?) {
        self.continuation = continuation
        self.framerMessage = framerMessage
    }

    func run(_ error: FlowError?) {
        guard let continuation else { return }
        if let error { continuation.resume(throwing: NWError(error)) } else { continuation.resume() }
    }

    func deliver(_ batch: FlowDatagramCompletions) {
        batch.runAll()
    }
}
