import ArgumentParser
import Dispatch
import Foundation
import Network

struct Listen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Accept connections on PORT; print what arrives, send standard input.",
        discussion: """
            Starts an NWListener on PORT (TCP, or UDP with --udp) and accepts every \
            connection. Data received on any connection is printed to standard output; \
            standard input goes to the most recent connection (it waits for one to be ready). \
            When standard input ends, that connection gets a final message (TCP FIN).

            With --echo, data is sent back to whoever sent it and standard input is not read; \
            when a TCP peer closes its side, nwcat finishes echoing and closes too.

            With --tls and no --cert/--key, nwcat makes a self-signed certificate (ECDSA P-256, \
            for this host name, localhost, 127.0.0.1 and ::1, valid 30 days) and prints its \
            SHA-256 pin to standard error; clients trust it with `nwcat connect --tls --pin PIN`. \
            The private key stays in memory and is never printed.

            With --ws, connections speak WebSocket (over TCP, or TLS with --tls): each chunk of \
            standard input is one message (text when it is UTF-8, binary otherwise), each message \
            received is printed, --echo sends each message back with its kind, and the end of \
            standard input closes the most recent connection with code 1000.

            nwcat keeps listening until interrupted (SIGINT or SIGTERM), then cancels the \
            listener and every connection and exits 0.
            """
    )

    @Argument(help: "Port number or service name to listen on (0 lets the system choose).")
    var port: String

    @OptionGroup var options: CommonOptions

    @OptionGroup var tlsOptions: TLSOptions

    @Flag(help: "Echo received data back to its sender.")
    var echo = false

    @Flag(name: .customLong("ws"), help: "Accept WebSocket connections (over TCP, or TLS with --tls).")
    var webSocket = false

    func validate() throws {
        try tlsOptions.validate(udp: options.udp, listening: true)
        if webSocket && (options.udp || tlsOptions.dtls) { throw ValidationError("--ws runs over TCP (or TLS), not UDP") }
        guard parsePort(port) != nil else { throw ValidationError("'\(port)' is not a port number or known service name") }
    }

    func run() throws {
        LogSetup.bootstrap(verbosity: options.verbosity)
        let parameters = try tlsOptions.parameters(udp: options.udp || tlsOptions.dtls, listening: true)
        options.apply(to: parameters)
        if webSocket { WebSocketMessages.add(to: parameters) }
        let session = ListenSession(
            port: parsePort(port)!, parameters: parameters,
            udp: options.udp || tlsOptions.dtls, webSocket: webSocket, verbose: options.verbose, echo: echo)
        let code = try session.run()
        if code != 0 { throw ExitCode(code) }
    }
}

/// The listener and its connections. Everything mutable is touched only on `queue`.
final class ListenSession: @unchecked Sendable {
    private let queue = DispatchQueue(label: "nwcat.listen")
    private let requestedPort: NWEndpoint.Port
    private let udp: Bool
    /// WebSocket mode: messages both ways, a close at the end of input.
    private let webSocket: Bool
    private let verbose: Bool
    private let echo: Bool
    private let latch = ExitLatch()
    private var listener: NWListener?
    private var signalSources: [DispatchSourceSignal] = []

    private var connections: [ObjectIdentifier: NWConnection] = [:]
    private var ready: Set<ObjectIdentifier> = []
    /// Connections whose peer finished sending (their end of stream was received).
    private var ended: Set<ObjectIdentifier> = []
    /// The most recent ready connection: where standard input goes.
    private var current: NWConnection?
    /// A chunk of standard input waiting for a connection.
    private var pendingInput: (Data, @Sendable () -> Void)?
    private var stopping = false
    private var exitCode: Int32 = 0

    private let parameters: NWParameters

    init(port: NWEndpoint.Port, parameters: NWParameters, udp: Bool, webSocket: Bool = false, verbose: Bool, echo: Bool) {
        requestedPort = port
        self.parameters = parameters
        self.udp = udp
        self.webSocket = webSocket
        self.verbose = verbose
        self.echo = echo
    }

    func run() throws -> Int32 {
        // No allowLocalEndpointReuse: it adds SO_REUSEPORT, and a second nwcat on the same
        // port should fail with EADDRINUSE rather than share it.
        let listener = try NWListener(using: parameters, on: requestedPort)
        self.listener = listener
        listener.stateUpdateHandler = { [self] state in handle(state) }
        listener.newConnectionHandler = { [self] connection in accept(connection) }
        listener.start(queue: queue)
        signalSources = onTerminationSignals(queue: queue) { [self] in stop(exitCode: 0) }
        if !echo {
            StandardInputPump { [self] data, done in
                queue.async { self.forward(data, done: done) }
            }.start()
        }
        return latch.wait()
    }

    // MARK: Listener

    private func handle(_ state: NWListener.State) {
        switch state {
        case .ready:
            let port = listener?.port?.rawValue ?? 0
            if verbose || requestedPort == .any { Console.log("listener state: ready on port \(port)") }
        case .waiting(let error), .failed(let error):
            if verbose { Console.log("listener state: \(Console.describe(state))") }
            Console.log("cannot listen on port \(requestedPort.rawValue): \(error.debugDescription)")
            stop(exitCode: 1)
        case .cancelled:
            if verbose { Console.log("listener state: cancelled") }
            latch.finish(exitCode)
        case .setup:
            if verbose { Console.log("listener state: setup") }
        }
    }

    private func stop(exitCode code: Int32) {
        guard !stopping else { return }
        stopping = true
        exitCode = code
        for connection in connections.values { connection.cancel() }
        listener?.cancel()
    }

    // MARK: Connections

    private func accept(_ connection: NWConnection) {
        guard !stopping else { connection.cancel(); return }
        let id = ObjectIdentifier(connection)
        connections[id] = connection
        if verbose { Console.log("connection from \(connection.endpoint.debugDescription)") }
        connection.stateUpdateHandler = { [self] state in
            if verbose { Console.log("connection state: \(Console.describe(state))") }
            switch state {
            case .ready:
                ready.insert(id)
                current = connection
                receiveNext(on: connection)
                flushPendingInput()
            case .waiting(let error), .failed(let error):
                // Both directions closed in order end the connection with ENOTCONN: not worth a line.
                let finished = ended.contains(id) && error == .posix(.ENOTCONN)
                if !verbose && !finished {
                    Console.log("connection from \(connection.endpoint.debugDescription) failed: \(error.debugDescription)")
                }
                connection.cancel()
            case .cancelled:
                connections[id] = nil
                ready.remove(id)
                ended.remove(id)
                if current === connection {
                    current = connections.values.first { ready.contains(ObjectIdentifier($0)) }
                }
            case .setup, .preparing:
                break
            }
        }
        connection.start(queue: queue)
    }

    private func receiveNext(on connection: NWConnection) {
        if webSocket {
            connection.receiveMessage { [self] data, context, _, error in
                receivedMessage(data, context: context, error: error, on: connection)
            }
        } else if udp {
            connection.receiveMessage { [self] data, _, _, error in
                received(data, endOfStream: false, error: error, on: connection)
            }
        } else {
            connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { [self] data, _, isComplete, error in
                received(data, endOfStream: isComplete, error: error, on: connection)
            }
        }
    }

    private func received(_ data: Data?, endOfStream: Bool, error: NWError?, on connection: NWConnection) {
        if let data, !data.isEmpty {
            Console.output(data)
            if echo {
                // The next receive waits for the echo to be sent: a peer that writes without
                // reading stalls its own stream (TCP's window) instead of growing our queue.
                connection.send(content: data, completion: .contentProcessed { [self] _ in
                    proceed(endOfStream: endOfStream, error: error, on: connection)
                })
                return
            }
        }
        proceed(endOfStream: endOfStream, error: error, on: connection)
    }

    /// A WebSocket message: printed, echoed with its kind (the next receive waits for the echo,
    /// as above); a close ends the connection (the stack has answered it).
    private func receivedMessage(_ data: Data?, context: NWConnection.ContentContext?, error: NWError?, on connection: NWConnection) {
        let metadata = WebSocketMessages.metadata(of: context)
        if metadata?.opcode == .close {
            if verbose { Console.log("peer closed the WebSocket: \(metadata.map { "\($0.closeCode)" } ?? "")") }
            ended.insert(ObjectIdentifier(connection))
            connection.cancel()
            return
        }
        guard let data, !data.isEmpty else { return proceed(endOfStream: false, error: error, on: connection) }
        WebSocketMessages.output(data, metadata: metadata)
        guard echo else { return proceed(endOfStream: false, error: error, on: connection) }
        let kind = NWProtocolWebSocket.Metadata(opcode: metadata?.opcode ?? .binary)
        let echoContext = NWConnection.ContentContext(identifier: "nwcat-echo", metadata: [kind])
        connection.send(content: data, contentContext: echoContext, completion: .contentProcessed { [self] _ in
            proceed(endOfStream: false, error: error, on: connection)
        })
    }

    /// What follows a receive (and its echo): the next receive, or the end of the connection.
    private func proceed(endOfStream: Bool, error: NWError?, on connection: NWConnection) {
        guard connections[ObjectIdentifier(connection)] != nil, !stopping else { return }
        if let error {
            Console.log("connection from \(connection.endpoint.debugDescription): \(error.debugDescription)")
            connection.cancel()
        } else if endOfStream {
            if verbose { Console.log("peer closed the connection") }
            ended.insert(ObjectIdentifier(connection))
            // Close our side after whatever is still queued (the echo), then release it.
            connection.send(content: nil, contentContext: .finalMessage, isComplete: true,
                            completion: .contentProcessed { _ in connection.cancel() })
        } else {
            receiveNext(on: connection)
        }
    }

    // MARK: Standard input → most recent connection

    private func forward(_ data: Data?, done: @escaping @Sendable () -> Void) {
        guard !stopping else { return }
        guard let data else {
            if verbose { Console.log("end of input") }
            if let current, webSocket {
                current.send(content: nil, contentContext: WebSocketMessages.closeContext, completion: .contentProcessed { _ in })
            } else if let current, !udp {
                current.send(content: nil, contentContext: .finalMessage, isComplete: true,
                             completion: .contentProcessed { _ in })
            }
            done()
            return
        }
        guard let current else {
            pendingInput = (data, done)  // the reader waits until a connection is ready
            return
        }
        let context = webSocket ? WebSocketMessages.context(for: data) : .defaultMessage
        current.send(content: data, contentContext: context, completion: .contentProcessed { _ in done() })
    }

    private func flushPendingInput() {
        guard let (data, done) = pendingInput else { return }
        pendingInput = nil
        forward(data, done: done)
    }
}
