import Foundation
import Network

/// A STARTTLS-style framer, as mail and FTP clients and proxy tunnels written for Apple
/// platforms use `prependApplicationProtocol(options:)`: a plaintext exchange of lines first,
/// then TLS above the framer, which passes everything through from then on.
/// - Client: at start it writes `STARTTLS`; on the server's `OK` it prepends the TLS options it
///   was given (`options["tls"]`) and marks ready. Any other answer fails with ECONNREFUSED.
/// - Server: on `STARTTLS` it answers `OK`, prepends its TLS options and marks ready.
/// Every line ends with CRLF. `options["prependAfterReady"]` makes it prepend once more after
/// `markReady`, and `options["prependFramer"]` prepend a framer instead of TLS; the errors those
/// throw go to `StartTLSFramer.errors`.
final class StartTLSFramer: NWProtocolFramerImplementation {
    static let label = "StartTLS"
    static let definition = NWProtocolFramer.Definition(implementation: StartTLSFramer.self)
    static let errors = LockedList<NWError>()

    private let isServer: Bool
    private let tls: NWProtocolTLS.Options?

    required init(framer: NWProtocolFramer.Instance) {
        isServer = framer.options["role"] as? String == "server"
        tls = framer.options["tls"] as? NWProtocolTLS.Options
    }

    func start(framer: NWProtocolFramer.Instance) -> NWProtocolFramer.StartResult {
        if !isServer { framer.writeOutput(data: Data("STARTTLS\r\n".utf8)) }
        return .willMarkReady
    }

    func handleInput(framer: NWProtocolFramer.Instance) -> Int {
        var line: String?
        _ = framer.parseInput(minimumIncompleteLength: 1, maximumLength: 64) { buffer, _ in
            guard let buffer, let end = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return 0 }
            line = String(decoding: buffer[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return end + 1
        }
        guard let line else { return 1 }
        if isServer {
            guard line == "STARTTLS" else {
                framer.markFailed(error: .posix(.EPROTO))
                return 0
            }
            framer.writeOutput(data: Data("OK\r\n".utf8))
        } else if line != "OK" {
            framer.markFailed(error: .posix(.ECONNREFUSED))
            return 0
        }
        do {
            if framer.options["prependFramer"] as? Bool == true {
                try framer.prependApplicationProtocol(options: NWProtocolFramer.Options(definition: HandshakeFramer.definition))
            } else if let tls {
                try framer.prependApplicationProtocol(options: tls)
            }
        } catch {
            Self.errors.append(error as? NWError ?? .posix(.EIO))
        }
        framer.passThroughInput()
        framer.passThroughOutput()
        framer.markReady()
        if framer.options["prependAfterReady"] as? Bool == true, let tls {
            do {
                try framer.prependApplicationProtocol(options: tls)
            } catch {
                Self.errors.append(error as? NWError ?? .posix(.EIO))
            }
        }
        return 0
    }

    func handleOutput(framer: NWProtocolFramer.Instance, message: NWProtocolFramer.Message, messageLength: Int, isComplete: Bool) {
        try? framer.writeOutputNoCopy(length: messageLength)
    }

    func wakeup(framer: NWProtocolFramer.Instance) {}
    func stop(framer: NWProtocolFramer.Instance) -> Bool { true }
    func cleanup(framer: NWProtocolFramer.Instance) {}

    /// TCP parameters with this framer as the only application protocol; the framer prepends
    /// `prepending` when its handshake is done.
    static func parameters(role: String, prepending tls: NWProtocolTLS.Options?, extra: [String: Bool] = [:]) -> NWParameters {
        let parameters = NWParameters.tcp
        let options = NWProtocolFramer.Options(definition: definition)
        options["role"] = role
        if let tls { options["tls"] = tls }
        for (key, value) in extra { options[key] = value }
        parameters.defaultProtocolStack.applicationProtocols.insert(options, at: 0)
        return parameters
    }

    /// Parameters with `tls` above this framer in the stack itself (`[TLS, framer]`), over
    /// `transport`: the framer prepends nothing.
    static func parameters(role: String, tlsOnTop tls: NWProtocolTLS.Options, transport: NWParameters = .tcp) -> NWParameters {
        let parameters = transport
        let options = NWProtocolFramer.Options(definition: definition)
        options["role"] = role
        parameters.defaultProtocolStack.applicationProtocols = [tls, options]
        return parameters
    }
}

/// A list several threads append to.
final class LockedList<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []

    func append(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }
}
