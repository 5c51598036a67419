// The framed-messages scenario on Network: a type-and-length protocol written as an
// NWProtocolFramer (as Apple's peer-to-peer sample writes its game protocol), over TCP to the C
// echo server, which sends every framed message back byte for byte.
import BenchSupport
import Dispatch
import Foundation
import Network

/// A 4-byte type and a 4-byte length, big-endian, before each message; the type travels as the
/// message's "type" value.
final class BenchTypeLengthFramer: NWProtocolFramerImplementation {
    static let label = "BenchTypeLength"
    static let definition = NWProtocolFramer.Definition(implementation: BenchTypeLengthFramer.self)

    required init(framer: NWProtocolFramer.Instance) {}
    func start(framer: NWProtocolFramer.Instance) -> NWProtocolFramer.StartResult { .ready }
    func wakeup(framer: NWProtocolFramer.Instance) {}
    func stop(framer: NWProtocolFramer.Instance) -> Bool { true }
    func cleanup(framer: NWProtocolFramer.Instance) {}

    func handleOutput(framer: NWProtocolFramer.Instance, message: NWProtocolFramer.Message, messageLength: Int, isComplete: Bool) {
        let type = message["type"] as? UInt32 ?? 0
        var header = (type.bigEndian, UInt32(messageLength).bigEndian)
        framer.writeOutput(data: withUnsafeBytes(of: &header) { Data($0) })
        try? framer.writeOutputNoCopy(length: messageLength)
    }

    func handleInput(framer: NWProtocolFramer.Instance) -> Int {
        while true {
            var header: (type: UInt32, length: UInt32)?
            let parsed = framer.parseInput(minimumIncompleteLength: 8, maximumLength: 8) { buffer, _ in
                guard let buffer, buffer.count >= 8 else { return 0 }
                header = (UInt32(bigEndian: buffer.loadUnaligned(as: UInt32.self)),
                          UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
                return 8
            }
            guard parsed, let header else { return 8 }
            let message = NWProtocolFramer.Message(instance: framer)
            message["type"] = header.type
            if !framer.deliverInputNoCopy(length: Int(header.length), message: message, isComplete: true) { return 0 }
        }
    }
}

/// The framed scenario's client: `window` framed `size`-byte messages in flight, each the
/// framer's message of type 7.
public func makeNWFramedClient(host: String, port: Int, size: Int, window: Int) -> NWMessageEchoClient {
    let message = NWProtocolFramer.Message(definition: BenchTypeLengthFramer.definition)
    message["type"] = UInt32(7)
    let parameters = tcpParameters()
    parameters.defaultProtocolStack.applicationProtocols.insert(
        NWProtocolFramer.Options(definition: BenchTypeLengthFramer.definition), at: 0)
    let (h, p) = endpoint(host, port)
    return NWMessageEchoClient(
        connection: NWConnection(host: h, port: p, using: parameters), label: "bench.framed",
        payload: Data(repeating: UInt8(ascii: "f"), count: size), window: window,
        context: NWConnection.ContentContext(identifier: "framed", metadata: [message])
    ) { context in
        (context?.protocolMetadata(definition: BenchTypeLengthFramer.definition) as? NWProtocolFramer.Message)?["type"]
            as? UInt32 == 7
    }
}
