// The message scenarios' client loop on Network (framed, ws): a window of messages in flight
// over one connection whose stack makes each send one message.
import BenchSupport
import Dispatch
import Foundation
import Network

/// One connection with `window` `payload`-sized messages in flight: each message that comes back
/// (the server echoes it) makes the next one go. As many receives as messages in flight are
/// pending, so that the messages one read brings complete together (one hop to the queue for all
/// of them, and the sends their completions make go out together).
public final class NWMessageEchoClient: Sendable {
    public let connection: NWConnection
    let queue: DispatchQueue
    let payload: Data
    let window: Int
    let context: NWConnection.ContentContext
    /// Whether a received message's context is what the server must echo.
    let isEcho: @Sendable (NWConnection.ContentContext?) -> Bool

    /// Starts `connection` and waits until it is ready.
    init(
        connection: NWConnection, label: String, payload: Data, window: Int, context: NWConnection.ContentContext,
        isEcho: @escaping @Sendable (NWConnection.ContentContext?) -> Bool
    ) {
        self.connection = connection
        self.queue = DispatchQueue(label: label)
        self.payload = payload
        self.window = window
        self.context = context
        self.isEcho = isEcho
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
            guard error == nil, data?.count == self.payload.count, self.isEcho(context) else {
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
