import Foundation
import Network

// Usage: EchoClient [host] [port]; by default 127.0.0.1 port 7777.
let arguments = CommandLine.arguments
let host = NWEndpoint.Host(arguments.count > 1 ? arguments[1] : "127.0.0.1")
guard let port = NWEndpoint.Port(arguments.count > 2 ? arguments[2] : "7777") else {
    print("not a port: \(arguments[2])")
    exit(2)
}

let connection = NWConnection(host: host, port: port, using: .tcp)

connection.stateUpdateHandler = { state in
    switch state {
    case .ready:
        connection.send(content: Data("hello\n".utf8), completion: .contentProcessed { error in
            if let error { print("send failed: \(error)") }
        })
        connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { data, _, _, error in
            if let data { print("received: \(String(decoding: data, as: UTF8.self))", terminator: "") }
            if let error { print("receive failed: \(error)") }
            connection.cancel()
        }
    case .waiting(let error), .failed(let error):
        print("failed: \(error)")
        exit(1)
    case .cancelled:
        exit(0)
    default:
        break
    }
}
connection.start(queue: .main)
dispatchMain()
