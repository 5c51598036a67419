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

/// One connection with `window` framed `size`-byte messages in flight: each message that comes
/// back (the server echoes the bytes) makes the framer deliver it, and the next one is sent. As
/// many receives as messages in flight are pending, so that the messages one read brings
/// complete together (one hop to the queue for all of them, and the sends their completions make
/// go out together).
public final class NWFramedClient: Sendable {
    public let connection: NWConnection
    let queue = DispatchQueue(label: "bench.framed")
    let payload: Data
    let window: Int
    let context: NWConnection.ContentContext

    public init(host: String, port: Int, size: Int, window: Int) {
        payload = Data(repeating: UInt8(ascii: "f"), count: size)
        self.window = window
        let message = NWProtocolFramer.Message(definition: BenchTypeLengthFramer.definition)
        message["type"] = UInt32(7)
        context = NWConnection.ContentContext(identifier: "framed", metadata: [message])
        let parameters = tcpParameters()
        parameters.defaultProtocolStack.applicationProtocols.insert(
            NWProtocolFramer.Options(definition: BenchTypeLengthFramer.definition), at: 0)
        let (h, p) = endpoint(host, port)
        connection = NWConnection(host: h, port: p, using: parameters)
        startAndWaitReady([connection], queue: queue)
    }

    public func start(_ control: RunControl) {
        queue.async {
            for _ in 0..<self.window { self.sendOne(control) }
            for _ in 0..<self.window { self.receiveNext(control) }
        }
    }

    private func sendOne(_ control: RunControl) {
        connection.send(content: payload, contentContext: context, completion: .contentProcessed { error in
            if error != nil { control.error() }
        })
    }

    private func receiveNext(_ control: RunControl) {
        connection.receiveMessage { data, context, _, error in
            guard error == nil, data?.count == self.payload.count,
                (context?.protocolMetadata(definition: BenchTypeLengthFramer.definition) as? NWProtocolFramer.Message)?["type"] as? UInt32 == 7
            else {
                control.error()
                control.connectionStopped()
                return
            }
            if control.completed() {
                self.sendOne(control)
                self.receiveNext(control)
            } else {
                control.connectionStopped()
            }
        }
    }

    public func close() {
        connection.cancel()
    }
}
