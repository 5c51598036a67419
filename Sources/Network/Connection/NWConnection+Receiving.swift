import Dispatch
import Foundation
import NetworkCore

extension NWConnection {
    /// Receives at least `minimumIncompleteLength` and at most `maximumLength` bytes (streams),
    /// or one message (datagrams: a whole datagram, or its first `maximumLength` bytes with
    /// `isComplete == false`). On a stream, `isComplete` means the peer closed its side.
    /// Invalid bounds (negative, `maximumLength` 0, minimum above maximum) give `EINVAL`.
    @preconcurrency public final func receive(
        minimumIncompleteLength: Int,
        maximumLength: Int,
        completion: @escaping @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) {
        // Captures no more than it needs, the connection and the completion (40 bytes, one
        // malloc size class below capturing the batcher and the flow apart; `Self` would add the
        // dynamic type, hence `NWConnection.translate`): an idle connection's pending receive
        // keeps this closure.
        flow.receive(
            minimum: minimumIncompleteLength, maximum: maximumLength,
            dataCompletion: { [self] outcome in
                let flow = self.flow
                let (data, context, isComplete, error) = NWConnection.translate(
                    outcome, isDatagram: flow.transportKind.carriesDatagrams)
                // (One closure for the queue, not one wrapped in another: one allocation per
                // delivered receive.)
                flow.callbackQueued()
                self.deliver { flow.runCallback(queued: true) { completion(data, context, isComplete, error) } }
            })
    }

    /// Receives one complete message: a datagram, or on a stream everything up to the peer's end
    /// of stream.
    @preconcurrency public final func receiveMessage(
        completion: @escaping @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) {
        // (A framed message is one message, like a datagram.)
        let isMessage = flow.carriesMessages
        receive(minimumIncompleteLength: isMessage ? 1 : Int.max, maximumLength: Int.max, completion: completion)
    }

    /// As ``receive(minimumIncompleteLength:maximumLength:completion:)``, with the bytes as
    /// `DispatchData`.
    @preconcurrency public final func receiveDiscontiguous(
        minimumIncompleteLength: Int,
        maximumLength: Int,
        completion: @escaping @Sendable (DispatchData?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) {
        receive(minimumIncompleteLength: minimumIncompleteLength, maximumLength: maximumLength) {
            data, context, isComplete, error in
            completion(data.map(Self.dispatchData), context, isComplete, error)
        }
    }

    /// As ``receiveMessage(completion:)``, with the bytes as `DispatchData`.
    @preconcurrency public final func receiveMessageDiscontiguous(
        completion: @escaping @Sendable (DispatchData?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) {
        receiveMessage { data, context, isComplete, error in
            completion(data.map(Self.dispatchData), context, isComplete, error)
        }
    }

    private static func dispatchData(_ data: Data) -> DispatchData {
        data.withUnsafeBytes { DispatchData(bytes: $0) }
    }

    private static func translate(
        _ outcome: DataReceiveOutcome, isDatagram: Bool
    ) -> (Data?, NWConnection.ContentContext?, Bool, NWError?) {
        switch outcome {
        case .data(let data, let isComplete, let isFinal, let message):
            let context: NWConnection.ContentContext
            if let framed = message as? NWProtocolFramer.Message {
                context = NWConnection.ContentContext(identifier: framed.definition.name, received: framed)
            } else if let webSocket = message as? WebSocketMessageInfo {
                context = NWConnection.ContentContext(
                    identifier: NWProtocolWebSocket.definition.name, received: NWProtocolWebSocket.Metadata(received: webSocket))
            } else if isDatagram {
                context = NWConnection.ContentContext(
                    identifier: "Datagram", metadata: [NWProtocolUDP.Metadata(), NWProtocolIP.Metadata.received(message)])
            } else {
                context = isFinal ? .finalMessage : .defaultMessage
            }
            return (data, context, isComplete, nil)
        case .failure(let error):
            return (nil, nil, false, NWError(error))
        }
    }
}
