import NIOCore

/// Receives on the loop, and reading from the socket only while someone will take the bytes
/// (up to the high-water marks: backpressure).
extension Flow {
    func receiveOnLoop(minimum: Int, maximum: Int, completion: @escaping ReceiveCompletion) {
        if let error = machine.receiveRejection {
            completion(.failure(error))
            return
        }
        for (c, outcome) in receives.enqueue(minimum: minimum, maximum: maximum, token: completion) {
            c(outcome)
        }
        requestReadIfNeeded()
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
