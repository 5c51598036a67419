import Logging
import NIOCore
import NetworkDNS

/// Receives on the loop, and reading from the socket only while someone will take the bytes
/// (up to the high-water marks: backpressure).
extension Flow {
    func receiveOnLoop(minimum: Int, maximum: Int, receiver: FlowReceiver) {
        if let error = machine.receiveRejection {
            receiver.complete(.failure(error))
            return
        }
        complete(receives.enqueue(minimum: minimum, maximum: maximum, token: receiver))
        requestReadIfNeeded()
    }

    /// Calls the completions of receives that finished, in order; a stream whose end they
    /// delivered may now be over.
    func complete(_ finished: [(FlowReceiver, ReceiveOutcome)]) {
        for (receiver, outcome) in finished { receiver.complete(outcome) }
        if receives.endOfStreamDelivered { endIfBothDirectionsClosed() }
    }

    /// A stream whose two directions both ended in order is over.
    func endIfBothDirectionsClosed() {
        guard receives.mode == .stream, outputShut, receives.endOfStreamDelivered, machine.state == .ready else { return }
        NetworkLog.connection.debug("both directions closed", metadata: logMetadata)
        perform(machine.bothDirectionsClosed())
    }

    private var highWaterBytes: Int {
        receives.mode == .stream ? Self.streamHighWater : Self.streamHighWater * 4
    }

    func requestReadIfNeeded() {
        guard machine.state == .ready, !readInFlight, case .owned(let channel) = transport, channel.isActive else {
            return
        }
        guard receives.wantsRead(highWater: highWaterBytes),
            receives.bufferedDatagramCount < Self.datagramHighWaterCount
        else { return }
        readInFlight = true
        channel.read()
    }
}
