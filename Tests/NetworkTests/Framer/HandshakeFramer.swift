import Foundation
import Network

/// A framer with a handshake of its own: at start it writes `HELLO` and waits for the peer's
/// `HELLO` (or `NOPE`, which fails the connection with ECONNREFUSED) before it marks the
/// connection ready; after that, bytes pass through as messages.
final class HandshakeFramer: NWProtocolFramerImplementation {
    static let label = "Handshake"
    static let definition = NWProtocolFramer.Definition(implementation: HandshakeFramer.self)
    private var greeted = false

    required init(framer: NWProtocolFramer.Instance) {}

    func start(framer: NWProtocolFramer.Instance) -> NWProtocolFramer.StartResult {
        framer.writeOutput(data: Data("HELLO".utf8))
        return .willMarkReady
    }

    func handleInput(framer: NWProtocolFramer.Instance) -> Int {
        if greeted {
            // Whatever is there, as one message.
            var available = 0
            _ = framer.parseInput(minimumIncompleteLength: 1, maximumLength: Int.max) { buffer, _ in
                available = buffer?.count ?? 0
                return 0
            }
            if available > 0 {
                _ = framer.deliverInputNoCopy(length: available, message: NWProtocolFramer.Message(instance: framer), isComplete: true)
            }
            return 1
        }
        var answer = ""
        let parsed = framer.parseInput(minimumIncompleteLength: 4, maximumLength: 5) { buffer, _ in
            guard let buffer else { return 0 }
            answer = String(decoding: buffer, as: UTF8.self)
            if answer.hasPrefix("NOPE") { return 4 }
            return answer == "HELLO" ? 5 : 0
        }
        guard parsed else { return 5 }
        if answer.hasPrefix("NOPE") {
            framer.markFailed(error: .posix(.ECONNREFUSED))
            return 0
        }
        guard answer == "HELLO" else { return 5 }
        greeted = true
        framer.markReady()
        return 1
    }

    func handleOutput(framer: NWProtocolFramer.Instance, message: NWProtocolFramer.Message, messageLength: Int, isComplete: Bool) {
        try? framer.writeOutputNoCopy(length: messageLength)
    }

    func wakeup(framer: NWProtocolFramer.Instance) {}
    func stop(framer: NWProtocolFramer.Instance) -> Bool { true }
    func cleanup(framer: NWProtocolFramer.Instance) {}

    static func parameters() -> NWParameters {
        let parameters = NWParameters.tcp
        parameters.defaultProtocolStack.applicationProtocols.insert(NWProtocolFramer.Options(definition: definition), at: 0)
        return parameters
    }
}
