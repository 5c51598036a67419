import Foundation
import Network

// Usage: EchoServer [port]; by default port 7777, and port 0 lets the system pick a free one.
// Every connection gets its bytes back; when the client finishes sending, the server does too.
let arguments = CommandLine.arguments
guard let port = NWEndpoint.Port(arguments.count > 1 ? arguments[1] : "7777") else {
    print("not a port: \(arguments[1])")
    exit(2)
}

// Standard error is unbuffered, so a script waiting for the "listening" line sees it at once.
// (@Sendable: the handlers that call these functions run on the queue, not in top-level code.)
@Sendable func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

@Sendable func echo(on connection: NWConnection) {
    connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { data, _, isComplete, error in
        if let data, !data.isEmpty {
            connection.send(content: data, completion: .contentProcessed { _ in })
        }
        if let error {
            log("connection failed: \(error)")
            connection.cancel()
        } else if isComplete {
            // The client is done: finish our direction too, then let the connection go.
            connection.send(content: nil, contentContext: .finalMessage, isComplete: true,
                            completion: .contentProcessed { _ in connection.cancel() })
        } else {
            echo(on: connection)
        }
    }
}

let listener = try NWListener(using: .tcp, on: port)

listener.stateUpdateHandler = { state in
    switch state {
    case .ready:
        log("listening on port \(listener.port ?? port)")
    case .waiting(let error), .failed(let error):
        log("cannot listen on port \(port): \(error)")
        exit(1)
    default:
        break
    }
}
listener.newConnectionHandler = { connection in
    connection.start(queue: .main)
    echo(on: connection)
}
listener.start(queue: .main)
dispatchMain()
