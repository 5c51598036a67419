import Foundation
import Network

/// A type-and-length game protocol, written against Apple's framer API the way Apple's
/// peer-to-peer sample writes its own: a 4-byte type and a 4-byte length, big-endian, before
/// each message; the type travels as the message's `"type"` value. Each instance also numbers the
/// messages it delivers (`"index"`, from 0) and signs them with its identity (`"instance"`), so
/// tests can tell one connection's framer from another's.
final class GameFramer: NWProtocolFramerImplementation {
    static let label = "Game"
    static let definition = NWProtocolFramer.Definition(implementation: GameFramer.self)

    private var delivered = 0

    required init(framer: NWProtocolFramer.Instance) {}

    func start(framer: NWProtocolFramer.Instance) -> NWProtocolFramer.StartResult { .ready }
    func wakeup(framer: NWProtocolFramer.Instance) {}
    func stop(framer: NWProtocolFramer.Instance) -> Bool { true }
    func cleanup(framer: NWProtocolFramer.Instance) {}

    func handleOutput(framer: NWProtocolFramer.Instance, message: NWProtocolFramer.Message, messageLength: Int, isComplete: Bool) {
        let type = message["type"] as? UInt32 ?? 0
        var header = Data()
        withUnsafeBytes(of: type.bigEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(messageLength).bigEndian) { header.append(contentsOf: $0) }
        framer.writeOutput(data: header)
        do {
            try framer.writeOutputNoCopy(length: messageLength)
        } catch {
            framer.markFailed(error: error as? NWError)
        }
    }

    func handleInput(framer: NWProtocolFramer.Instance) -> Int {
        while true {
            var header: (type: UInt32, length: UInt32)?
            let parsed = framer.parseInput(minimumIncompleteLength: 8, maximumLength: 8) { buffer, _ in
                guard let buffer, buffer.count >= 8 else { return 0 }
                let bytes = Array(buffer)
                header = (Self.integer(bytes[0..<4]), Self.integer(bytes[4..<8]))
                return 8
            }
            guard parsed, let header else { return 8 }
            let message = NWProtocolFramer.Message(instance: framer)
            message["type"] = header.type
            message["index"] = delivered
            message["instance"] = ObjectIdentifier(self)
            delivered += 1
            if !framer.deliverInputNoCopy(length: Int(header.length), message: message, isComplete: true) {
                return 0
            }
        }
    }

    static func integer(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The wire form of one message.
    static func encode(type: UInt32, _ payload: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: type.bigEndian, Array.init) + withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
    }

    /// `base` with this framer on top of its application protocols.
    static func parameters(_ base: NWParameters = .tcp) -> NWParameters {
        base.defaultProtocolStack.applicationProtocols.insert(NWProtocolFramer.Options(definition: definition), at: 0)
        return base
    }

    /// A send context carrying `type`.
    static func context(type: UInt32) -> NWConnection.ContentContext {
        NWConnection.ContentContext(identifier: "game \(type)", metadata: [NWProtocolFramer.Message(gameType: type)])
    }

    /// The framer instance that delivered a received message, and its number there.
    static func origin(of context: NWConnection.ContentContext?) -> (instance: ObjectIdentifier, index: Int)? {
        guard let message = context?.protocolMetadata(definition: definition) as? NWProtocolFramer.Message,
            let instance = message["instance"] as? ObjectIdentifier, let index = message["index"] as? Int
        else { return nil }
        return (instance, index)
    }

    /// The type a received context carries.
    static func type(of context: NWConnection.ContentContext?) -> UInt32? {
        (context?.protocolMetadata(definition: definition) as? NWProtocolFramer.Message)?["type"] as? UInt32
    }
}

// Apple's samples give the message class a convenience initializer of their own in an
// extension; this must compile against the module as it does against Apple's.
extension NWProtocolFramer.Message {
    convenience init(gameType: UInt32) {
        self.init(definition: GameFramer.definition)
        self["type"] = gameType
    }
}
