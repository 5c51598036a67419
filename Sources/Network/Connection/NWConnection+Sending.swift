import Dispatch
import Foundation
import NetworkCore

extension NWConnection {
    /// Sends `content` as part of the message `contentContext`. `isComplete` ends the message
    /// (on UDP, one datagram per complete message); completing a final context (`isFinal`, as
    /// ``ContentContext/finalMessage`` and ``ContentContext/defaultStream``) closes the sending
    /// side. Sends made before the connection is ready wait and leave, in order, once it is.
    @preconcurrency public final func send(
        content: Data?,
        contentContext: NWConnection.ContentContext = .defaultMessage,
        isComplete: Bool = true,
        completion: NWConnection.SendCompletion
    ) {
        if flow.isFramed {
            let framed = FramedSendCompletion(completion, context: contentContext, connection: self)
            // A complete send without content whose context carries a message of the stack (a
            // WebSocket close or ping, a framer message that is all header) is still a message:
            // an empty one. Without such metadata it sends nothing, as on UDP.
            let content = content ?? (framed.framerMessage != nil && isComplete ? Data() : nil)
            return flow.send(datagram: content, isComplete: isComplete, closesWrite: contentContext.isFinal, completion: framed)
        }
        if flow.transportKind.carriesDatagrams {
            let marking = datagramMarking(contentContext)
            return flow.send(
                datagram: content, isComplete: isComplete, closesWrite: contentContext.isFinal,
                completion: DatagramSendCompletion(completion, connection: self), ecn: marking.ecn,
                trafficClass: marking.trafficClass)
        }
        flow.send(
            data: content, isComplete: isComplete, closesWrite: contentContext.isFinal,
            completion: flowCompletion(completion))
    }

    /// Sends any contiguous or discontiguous bytes; see ``send(content:contentContext:isComplete:completion:)``.
    @preconcurrency public final func send<Content: DataProtocol>(
        content: Content?,
        contentContext: NWConnection.ContentContext = .defaultMessage,
        isComplete: Bool = true,
        completion: NWConnection.SendCompletion
    ) {
        // No content means the same whatever its type.
        guard let content else {
            return send(content: Data?.none, contentContext: contentContext, isComplete: isComplete, completion: completion)
        }
        if flow.isFramed {
            return flow.send(
                datagramBytes: content, isComplete: isComplete, closesWrite: contentContext.isFinal,
                completion: FramedSendCompletion(completion, context: contentContext, connection: self))
        }
        if flow.transportKind.carriesDatagrams {
            let marking = datagramMarking(contentContext)
            return flow.send(
                datagramBytes: content, isComplete: isComplete, closesWrite: contentContext.isFinal,
                completion: DatagramSendCompletion(completion, connection: self), ecn: marking.ecn,
                trafficClass: marking.trafficClass)
        }
        flow.send(
            bytes: content, isComplete: isComplete, closesWrite: contentContext.isFinal,
            completion: flowCompletion(completion))
    }

    /// The marking a datagram's context asks for with its IP metadata.
    private func datagramMarking(_ context: NWConnection.ContentContext) -> DatagramMarking {
        DatagramMarking(ip: context.protocolMetadata(definition: NWProtocolIP.definition) as? NWProtocolIP.Metadata)
    }

    /// The engine's completion for a send's `completion`: it hands the handler to the queue.
    private func flowCompletion(_ completion: NWConnection.SendCompletion) -> Flow.SendCompletion? {
        guard case .contentProcessed(let handler) = completion else { return nil }
        // Some stream completions come from the sender's thread (the send fit the flow's
        // buffer), the rest from the loop: straight to the queue, so they stay in order.
        return { [self] error, ticket in
            let nwError = error.map(NWError.init)
            self.deliverInOrder { ticket.run { handler(nwError) } }
        }
    }

    /// Runs `block` and sends everything it sends together: for datagrams, in one system call
    /// (`sendmmsg`) where possible.
    public final func batch(_ block: () -> Void) {
        flow.beginBatch()
        block()
        flow.endBatch()
    }
}
