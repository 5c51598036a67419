import Dispatch
import Foundation
import Network

/// `connect --quic --streams N`: one QUIC connection (an `NWConnectionGroup` over an
/// `NWMultiplexGroup`) whose N streams each carry all of standard input, then their end; what
/// comes back on each is printed, stream after stream, once every stream has ended. Standard
/// input is read whole first (at most `inputLimit` bytes), since every stream sends it.
final class QUICStreamsSession: @unchecked Sendable {
    /// The most standard input this mode holds in memory.
    static let inputLimit = 16 << 20

    private let queue = DispatchQueue(label: "nwcat.quic-streams")
    private let group: NWConnectionGroup
    private let count: Int
    private let verbose: Bool
    private let latch = ExitLatch()
    // Touched on `queue` only.
    private var input = Data()
    private var replies: [Data?]
    /// Streams that ended both ways (their end was received after ours was sent).
    private var ended = Set<Int>()
    private var started = false
    private var exitCode: Int32 = 0
    private var signalSources: [DispatchSourceSignal] = []

    init(endpoint: NWEndpoint, parameters: NWParameters, streams: Int, verbose: Bool) {
        group = NWConnectionGroup(with: NWMultiplexGroup(to: endpoint), using: parameters)
        count = streams
        self.verbose = verbose
        replies = Array(repeating: nil, count: streams)
    }

    func run() -> Int32 {
        group.stateUpdateHandler = { [self] state in
            if verbose { Console.log("group state: \(state)") }
            switch state {
            case .ready:
                guard !started else { return }
                started = true
                readInput()
            case .failed(let error), .waiting(let error):
                Console.log("QUIC connection to \(group.descriptor.members.first?.debugDescription ?? "?") failed: \(error.debugDescription)")
                end(1)
            case .cancelled:
                latch.finish(exitCode)
            case .setup:
                break
            }
        }
        group.newConnectionHandler = { stream in stream.cancel() }
        group.start(queue: queue)
        signalSources = onTerminationSignals(queue: queue) { [self] in end(130) }
        return latch.wait()
    }

    private func end(_ code: Int32) {
        if exitCode == 0 { exitCode = code }
        group.cancel()
    }

    private func readInput() {
        StandardInputPump { [self] data, done in
            queue.async {
                guard let data else { return self.openStreams() }
                self.input += data
                if self.input.count > Self.inputLimit {
                    Console.log("--streams sends standard input on every stream: at most \(Self.inputLimit) bytes")
                    return self.end(1)
                }
                done()
            }
        }.start()
    }

    private func openStreams() {
        for index in 0..<count {
            guard let stream = NWConnection(from: group) else { return end(1) }
            replies[index] = Data()
            stream.stateUpdateHandler = { [self] state in
                // (A stream closed both ways reports ENOTCONN, as a TCP connection does.)
                if case .failed(let error) = state, !ended.contains(index) {
                    Console.log("stream \(index) failed: \(error.debugDescription)")
                    end(1)
                }
            }
            stream.start(queue: queue)
            stream.send(content: input, contentContext: .finalMessage, completion: .contentProcessed { [self] error in
                if let error {
                    Console.log("stream \(index): \(error.debugDescription)")
                    end(1)
                }
            })
            receive(on: stream, index: index)
        }
    }

    private func receive(on stream: NWConnection, index: Int) {
        stream.receive(minimumIncompleteLength: 1, maximumLength: 65_536) { [self] data, _, isComplete, error in
            if let data { replies[index]? += data }
            if error != nil { return }  // the state handler reports it
            guard isComplete else { return receive(on: stream, index: index) }
            if verbose {
                let number = (stream.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.streamIdentifier
                Console.log("stream \(index) (QUIC stream \(number.map(String.init) ?? "?")) ended")
            }
            ended.insert(index)
            stream.cancel()
            if ended.count == count {
                for reply in replies { if let reply { Console.output(reply) } }
                end(0)
            }
        }
    }
}
