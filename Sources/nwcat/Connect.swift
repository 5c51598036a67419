import ArgumentParser
import Dispatch
import Foundation
import Network

struct Connect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to HOST PORT; send standard input, print what arrives.",
        discussion: """
            Opens an NWConnection to HOST PORT (TCP, or UDP with --udp) and relays standard \
            input to it and it to standard output.

            TCP: when standard input ends, nwcat sends a final message (TCP FIN) and keeps \
            printing until the peer closes too; nwcat also stops when the peer closes first. \
            UDP: each chunk read from standard input is one datagram; after standard input \
            ends nwcat keeps printing datagrams for --wait seconds.

            A connection that cannot be established (refused, no route, unknown host) is a \
            failure: nwcat does not wait for the network to change as an app would.
            """
    )

    @Argument(help: "Host name or IP address (an IPv6 literal may carry %interface).")
    var host: String

    @Argument(help: "Port number or service name (e.g. 80 or http).")
    var port: String

    @OptionGroup var options: CommonOptions

    @OptionGroup var tlsOptions: TLSOptions

    @OptionGroup var proxyOptions: ProxyOptions

    @OptionGroup var establishmentOptions: EstablishmentOptions

    @Option(help: "UDP: seconds to keep receiving after standard input ends.")
    var wait: Double = 1

    @Flag(name: [.customShort("4"), .customLong("ipv4")], help: "Use IPv4 addresses only.")
    var ipv4 = false

    @Flag(name: [.customShort("6"), .customLong("ipv6")], help: "Use IPv6 addresses only.")
    var ipv6 = false

    func validate() throws {
        guard parsePort(port) != nil else { throw ValidationError("'\(port)' is not a port number or known service name") }
        guard wait >= 0 else { throw ValidationError("--wait must not be negative") }
        try tlsOptions.validate(udp: options.udp, listening: false)
        if ipv4 && ipv6 { throw ValidationError("--ipv4 and --ipv6 exclude each other") }
        try establishmentOptions.validate(udp: options.udp || tlsOptions.dtls)
    }

    /// The parameters from the TLS/UDP flags, restricted to one IP version if asked.
    private func parameters() throws -> NWParameters {
        let parameters = try tlsOptions.parameters(udp: options.udp || tlsOptions.dtls)
        if ipv4 || ipv6, let ip = parameters.defaultProtocolStack.internetProtocol as? NWProtocolIP.Options {
            ip.version = ipv4 ? .v4 : .v6
        }
        try proxyOptions.apply(to: parameters)
        establishmentOptions.apply(to: parameters)
        options.apply(to: parameters)
        return parameters
    }

    func run() throws {
        LogSetup.bootstrap(verbosity: options.verbosity)
        let session = ConnectSession(
            host: NWEndpoint.Host(host), port: parsePort(port)!, parameters: try parameters(),
            udp: options.udp || tlsOptions.dtls, verbose: options.verbose, udpWait: wait,
            waitsForNetwork: establishmentOptions.waitForNetwork)
        let code = session.run()
        if code != 0 { throw ExitCode(code) }
    }
}

/// One client connection. Everything mutable is touched only on `queue`, where the connection
/// delivers its callbacks.
final class ConnectSession: @unchecked Sendable {
    private let queue = DispatchQueue(label: "nwcat.connect")
    private let connection: NWConnection
    private let udp: Bool
    private let verbose: Bool
    private let udpWait: Double
    private let waitsForNetwork: Bool
    private let latch = ExitLatch()
    private var signalSources: [DispatchSourceSignal] = []

    private var started = false
    private var closing = false
    private var exitCode: Int32 = 0

    init(
        host: NWEndpoint.Host, port: NWEndpoint.Port, parameters: NWParameters, udp: Bool, verbose: Bool, udpWait: Double,
        waitsForNetwork: Bool = false
    ) {
        self.udp = udp
        self.verbose = verbose
        self.udpWait = udpWait
        self.waitsForNetwork = waitsForNetwork
        connection = NWConnection(host: host, port: port, using: parameters)
    }

    func run() -> Int32 {
        connection.stateUpdateHandler = { [self] state in handle(state) }
        if verbose {
            // What the connection learns about its path after it is ready.
            connection.pathUpdateHandler = { Console.log("path: \(Monitor.line($0))") }
            connection.viabilityUpdateHandler = { Console.log("viability: \($0)") }
            connection.betterPathUpdateHandler = { Console.log("better path: \($0)") }
        }
        connection.start(queue: queue)
        signalSources = onTerminationSignals(queue: queue) { [self] in
            if verbose { Console.log("interrupted") }
            close(exitCode: 130)
        }
        return latch.wait()
    }

    private func handle(_ state: NWConnection.State) {
        if verbose { Console.log("connection state: \(Console.describe(state))") }
        switch state {
        case .ready:
            guard !started else { return }
            started = true
            if verbose {
                // How the connection was made: resolution, proxy, attempts, handshakes.
                connection.requestEstablishmentReport(queue: queue) { report in
                    if let report {
                        Console.log("establishment report:\n\(report.debugDescription)")
                        Console.log(EstablishmentTimingLine.format(report))
                    }
                }
            }
            receiveNext()
            StandardInputPump { [self] data, done in
                queue.async { self.forward(data, done: done) }
            }.start()
        case .waiting where waitsForNetwork:
            break  // It tries again by itself when the network changes.
        case .waiting(let error), .failed(let error):
            fail(error)
        case .cancelled:
            latch.finish(exitCode)
        case .setup, .preparing:
            break
        }
    }

    private func fail(_ error: NWError) {
        guard !closing else { return }
        Console.log("connection to \(connection.endpoint.debugDescription) failed: \(error.debugDescription)")
        close(exitCode: 1)
    }

    private func close(exitCode code: Int32) {
        guard !closing else { return }
        closing = true
        exitCode = code
        connection.cancel()
    }

    // MARK: Network → standard output

    private func receiveNext() {
        if udp {
            connection.receiveMessage { [self] data, _, _, error in
                received(data, endOfStream: false, error: error)
            }
        } else {
            connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { [self] data, _, isComplete, error in
                received(data, endOfStream: isComplete, error: error)
            }
        }
    }

    private func received(_ data: Data?, endOfStream: Bool, error: NWError?) {
        if let data, !data.isEmpty { Console.output(data) }
        guard !closing else { return }
        if let error {
            fail(error)
        } else if endOfStream {
            if verbose { Console.log("peer closed the connection") }
            close(exitCode: 0)
        } else {
            receiveNext()
        }
    }

    // MARK: Standard input → network

    private func forward(_ data: Data?, done: @escaping @Sendable () -> Void) {
        guard !closing else { return }  // leave the reader parked; the process is ending
        if let data {
            connection.send(content: data, completion: .contentProcessed { [self] error in
                if let error { fail(error) } else { done() }
            })
            return
        }
        if verbose { Console.log("end of input") }
        if udp {
            queue.asyncAfter(deadline: .now() + udpWait) { [self] in close(exitCode: 0) }
        } else {
            // Final message: TCP FIN. Keep receiving until the peer closes as well.
            connection.send(content: nil, contentContext: .finalMessage, isComplete: true,
                            completion: .contentProcessed { [self] error in
                                if let error { fail(error) }
                            })
        }
        done()
    }
}
