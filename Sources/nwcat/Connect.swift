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

            With --ws URL (instead of HOST PORT), nwcat speaks WebSocket to a ws:// or wss:// \
            URL: each chunk read from standard input (a line, at a terminal) is one message, \
            text when it is UTF-8 and binary otherwise; each message received is printed (a \
            text message followed by a line break). When standard input ends, nwcat closes \
            with code 1000 and exits once the server has answered the close.
            """
    )

    @Argument(help: "Host name or IP address (an IPv6 literal may carry %interface).")
    var host: String?

    @Argument(help: "Port number or service name (e.g. 80 or http).")
    var port: String?

    @Option(name: .customLong("ws"), help: "Connect to this WebSocket URL (ws:// or wss://) instead of HOST PORT.")
    var webSocketURL: String?

    @OptionGroup var options: CommonOptions

    @OptionGroup var tlsOptions: TLSOptions

    @OptionGroup var proxyOptions: ProxyOptions

    @OptionGroup var establishmentOptions: EstablishmentOptions

    @Option(help: "QUIC: open this many streams at once, send all of standard input on each, and print what comes back on each, stream after stream.")
    var streams: Int?

    @Option(help: "UDP: seconds to keep receiving after standard input ends.")
    var wait: Double = 1

    @Flag(name: [.customShort("4"), .customLong("ipv4")], help: "Use IPv4 addresses only.")
    var ipv4 = false

    @Flag(name: [.customShort("6"), .customLong("ipv6")], help: "Use IPv6 addresses only.")
    var ipv6 = false

    func validate() throws {
        if let webSocketURL {
            guard host == nil && port == nil else { throw ValidationError("--ws URL replaces HOST PORT") }
            guard WebSocketMessages.url(webSocketURL) != nil else {
                throw ValidationError("'\(webSocketURL)' is not a ws:// or wss:// URL with a host")
            }
            if options.udp || tlsOptions.dtls || tlsOptions.quic { throw ValidationError("--ws runs over TCP (or TLS), not UDP or QUIC") }
        } else {
            guard let host, !host.isEmpty, let port else { throw ValidationError("connect needs HOST PORT, or --ws URL") }
            guard parsePort(port) != nil else { throw ValidationError("'\(port)' is not a port number or known service name") }
        }
        guard wait >= 0 else { throw ValidationError("--wait must not be negative") }
        if let streams {
            guard tlsOptions.quic, !tlsOptions.datagram else { throw ValidationError("--streams needs --quic (without --datagram)") }
            guard (1...1_000).contains(streams) else { throw ValidationError("--streams takes 1 to 1000") }
        }
        try transportSecurity.validate(udp: options.udp, listening: false)
        if ipv4 && ipv6 { throw ValidationError("--ipv4 and --ipv6 exclude each other") }
        try establishmentOptions.validate(udp: options.udp || tlsOptions.dtls || tlsOptions.quic)
    }

    /// The TLS options, with TLS on for a wss:// URL (which never goes out in plaintext).
    private var transportSecurity: TLSOptions {
        var security = tlsOptions
        if let webSocketURL, WebSocketMessages.url(webSocketURL)?.scheme?.lowercased() == "wss" { security.tls = true }
        return security
    }

    /// The parameters from the TLS/UDP/WebSocket flags, restricted to one IP version if asked.
    private func parameters() throws -> NWParameters {
        let parameters = try transportSecurity.parameters(udp: options.udp || tlsOptions.dtls)
        if webSocketURL != nil { WebSocketMessages.add(to: parameters) }
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
        let endpoint: NWEndpoint
        if let webSocketURL, let url = WebSocketMessages.url(webSocketURL) {
            endpoint = .url(url)
        } else if let host, let port = port.flatMap(parsePort) {
            endpoint = .hostPort(host: NWEndpoint.Host(host), port: port)
        } else {
            throw ValidationError("connect needs HOST PORT, or --ws URL")
        }
        if let streams {
            let session = QUICStreamsSession(endpoint: endpoint, parameters: try parameters(), streams: streams, verbose: options.verbose)
            let code = session.run()
            if code != 0 { throw ExitCode(code) }
            return
        }
        let session = ConnectSession(
            endpoint: endpoint, parameters: try parameters(), udp: options.udp || tlsOptions.dtls || tlsOptions.datagram,
            webSocket: webSocketURL != nil, verbose: options.verbose, udpWait: wait,
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
    /// WebSocket mode: messages both ways, a close at the end of input.
    private let webSocket: Bool
    private let verbose: Bool
    private let udpWait: Double
    private let waitsForNetwork: Bool
    private let latch = ExitLatch()
    private var signalSources: [DispatchSourceSignal] = []

    private var started = false
    private var closing = false
    private var exitCode: Int32 = 0

    init(
        endpoint: NWEndpoint, parameters: NWParameters, udp: Bool, webSocket: Bool = false, verbose: Bool, udpWait: Double,
        waitsForNetwork: Bool = false
    ) {
        self.udp = udp
        self.webSocket = webSocket
        self.verbose = verbose
        self.udpWait = udpWait
        self.waitsForNetwork = waitsForNetwork
        connection = NWConnection(to: endpoint, using: parameters)
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
        if webSocket {
            connection.receiveMessage { [self] data, context, _, error in
                let metadata = WebSocketMessages.metadata(of: context)
                if metadata?.opcode == .close {
                    if verbose { Console.log("server closed the WebSocket: \(metadata.map { "\($0.closeCode)" } ?? "")") }
                    if error == nil { return close(exitCode: 0) }
                }
                if let data { WebSocketMessages.output(data, metadata: metadata) }
                received(nil, endOfStream: false, error: error)
            }
        } else if udp {
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
            let context = webSocket ? WebSocketMessages.context(for: data) : .defaultMessage
            connection.send(content: data, contentContext: context, completion: .contentProcessed { [self] error in
                if let error { fail(error) } else { done() }
            })
            return
        }
        if verbose { Console.log("end of input") }
        if webSocket {
            // Close with 1000; the server's answering close ends the session (or, failing
            // that, the wait).
            connection.send(content: nil, contentContext: WebSocketMessages.closeContext, completion: .contentProcessed { [self] error in
                if let error { fail(error) }
            })
            queue.asyncAfter(deadline: .now() + max(udpWait, 5)) { [self] in close(exitCode: 0) }
        } else if udp {
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
