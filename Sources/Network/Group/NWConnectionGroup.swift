#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NetworkCore
import NetworkSync

/// A set of connections that belong together. With an ``NWMultiplexGroup`` and QUIC
/// parameters it is one QUIC connection to one peer whose streams are ``NWConnection``s: open one
/// with ``NWConnection/init(from:to:using:)`` (or ``extract(connectionTo:using:)``), and receive
/// those the peer opens in ``newConnectionHandler``. Cancelling the group closes the connection.
///
/// The group's messages are the QUIC connection's datagrams (RFC 9221): ``send(content:to:message:completion:)``
/// sends one, ``setReceiveHandler(maximumMessageSize:rejectOversizedMessages:handler:)`` gets
/// those the peer sends.
///
/// With an ``NWMulticastGroup`` and UDP parameters it is one UDP socket on the group's port that
/// joins every group address: the receive handler gets each datagram sent to them, with its
/// sender (``Message/remoteEndpoint``, to ``Message/reply(content:message:)`` to), and a send
/// without an endpoint goes to every group address. Cancelling the group leaves the groups.
public final class NWConnectionGroup: CustomDebugStringConvertible, @unchecked Sendable {
    /// What the group was made of.
    public final let descriptor: any NWGroupDescriptor
    /// The parameters given at creation.
    public final let parameters: NWParameters
    /// The connection that stands for the whole group (a QUIC connection without a stream of
    /// its own), nil for other groups.
    private let connection: NWConnection?
    /// A multicast group's socket (the engine's listener in group mode), nil for other groups.
    let multicastEngine: FlowListener?
    let shared = Lock(Shared())

    struct Shared {
        var state: State = .setup
        var stateUpdateHandler: (@Sendable (State) -> Void)?
        var newConnectionHandler: (@Sendable (NWConnection) -> Void)?
        var receiveHandler: (@Sendable (Message, Data?, Bool) -> Void)?
        var receiveLimit = (size: Int.max, rejectsOversized: true)
        /// The loop reading the connection's datagrams runs (it starts once the group is ready
        /// and a receive handler is set).
        var receiving = false
        /// A multicast group's datagrams on their way to the queue (bounded: see
        /// `deliverMulticast`).
        var pendingDeliveries = 0
        var queue: DispatchQueue?
        /// The engine flows of a multicast group's connections to one peer each (for
        /// `reinsert(connection:)`).
        var peerFlows: Set<ObjectIdentifier> = []
    }

    /// Creates a group; nothing happens until ``start(queue:)``.
    public init(with descriptor: any NWGroupDescriptor, using parameters: NWParameters) {
        self.descriptor = descriptor
        self.parameters = parameters
        if let multiplex = descriptor as? NWMultiplexGroup,
            parameters.defaultProtocolStack.transportProtocol is NWProtocolQUIC.Options
        {
            connection = NWConnection(multiplexedTo: multiplex.endpoint, using: parameters)
            multicastEngine = nil
        } else {
            connection = nil
            multicastEngine = (descriptor as? NWMulticastGroup).flatMap { Self.multicastEngine(for: $0, using: parameters) }
        }
    }

    /// A QUIC connection a listener accepted, standing for the group of its streams.
    init(accepted flow: Flow, endpoint: NWEndpoint, parameters: NWParameters) {
        self.descriptor = NWMultiplexGroup(to: endpoint)
        self.parameters = parameters
        self.connection = NWConnection(accepted: flow, endpoint: endpoint, parameters: parameters)
        self.multicastEngine = nil
    }

    /// A description for logs.
    public var debugDescription: String {
        "NWConnectionGroup(\(descriptor.members.map(\.debugDescription).joined(separator: ", ")))"
    }

    // MARK: - Life cycle

    /// Starts the group; its callbacks run on `queue`. Later calls are ignored.
    public final func start(queue: DispatchQueue) {
        let first = shared.withLock { shared -> Bool in
            guard shared.queue == nil else { return false }
            shared.queue = queue
            return true
        }
        guard first else { return }
        if let multicastEngine {
            startMulticast(multicastEngine, queue: queue)
            return
        }
        guard let connection else {
            // Groups over other protocols (a multicast group over anything but plain UDP).
            changeState(to: .failed(.posix(.EPROTONOSUPPORT)), on: queue)
            return
        }
        connection.stateUpdateHandler = { [self] state in
            switch state {
            case .setup, .preparing: break
            case .waiting(let error): changeState(to: .waiting(error), on: queue)
            case .ready:
                takePeerStreams(of: connection, queue: queue)
                changeState(to: .ready, on: queue)
                startReceiving()
            case .failed(let error): changeState(to: .failed(error), on: queue)
            case .cancelled: changeState(to: .cancelled, on: queue)
            }
        }
        connection.start(queue: queue)
    }

    /// The queue given to ``start(queue:)``, nil before.
    public final var queue: DispatchQueue? { shared.withLock { $0.queue } }

    /// Ends the group: the connection closes, and its streams with it; ``State/cancelled``
    /// comes last.
    public final func cancel() {
        if let connection {
            connection.cancel()
        } else if let multicastEngine, queue != nil {
            multicastEngine.cancel()
        } else if let queue {
            changeState(to: .cancelled, on: queue)
        } else {
            shared.withLock { $0.state = .cancelled }
        }
    }

    /// The group's current state.
    public final var state: State { shared.withLock { $0.state } }

    /// Called on the queue with every state change.
    @preconcurrency
    public final var stateUpdateHandler: (@Sendable (State) -> Void)? {
        get { shared.withLock { $0.stateUpdateHandler } }
        set { shared.withLock { $0.stateUpdateHandler = newValue } }
    }

    /// Called on the queue with each stream the peer opens, as a connection to start; a stream
    /// that comes while no handler is set is reset.
    @preconcurrency
    public final var newConnectionHandler: (@Sendable (NWConnection) -> Void)? {
        get { shared.withLock { $0.newConnectionHandler } }
        set { shared.withLock { $0.newConnectionHandler = newValue } }
    }

    func changeState(to state: State, on queue: DispatchQueue) {
        shared.withLock { $0.state = state }
        // The connection's states arrive on the queue already; others are sent there.
        queue.async { [self] in
            let handler = shared.withLock { $0.stateUpdateHandler }
            handler?(state)
            if state == .cancelled {
                // Nothing follows: the handlers and what they captured go.
                shared.withLock { shared in
                    shared.stateUpdateHandler = nil
                    shared.newConnectionHandler = nil
                    shared.receiveHandler = nil
                }
            }
        }
    }

    private func takePeerStreams(of connection: NWConnection, queue: DispatchQueue) {
        let endpoint = connection.endpoint
        let parameters = self.parameters
        connection.flow.takeQUICPeerStreams { [weak self] flow in
            let group = self
            let stream = NWConnection(accepted: flow, endpoint: endpoint, parameters: parameters)
            queue.async {
                guard let handler = group?.shared.withLock({ $0.newConnectionHandler }) else {
                    stream.forceCancel()
                    return
                }
                handler(stream)
            }
        }
    }

    // MARK: - Streams

    /// A connection taken from the group. For a QUIC group, a new stream (its options replace
    /// the QUIC options of the group's parameters when given; start it to open the stream). For
    /// a ready multicast group, a connection to `endpoint` (a member or a sender, as an address)
    /// on the group's socket: it sends from the group's port, and the datagrams `endpoint` sends
    /// go to it instead of to the group's receive handler. Nil for groups that cannot make one.
    public final func extract(connectionTo endpoint: NWEndpoint? = nil, using options: NWProtocolOptions? = nil) -> NWConnection? {
        NWConnection(from: self, to: endpoint, using: options)
    }

    /// Gives a connection taken from a multicast group back: its peer's datagrams go to the
    /// group's receive handler again, and the connection is cancelled. False for a connection
    /// this group did not make, and for a QUIC group's streams, which are not taken back.
    public final func reinsert(connection: NWConnection) -> Bool {
        let flow = connection.flow
        guard let multicastEngine, shared.withLock({ $0.peerFlows.remove(ObjectIdentifier(flow)) != nil }) else { return false }
        multicastEngine.returnGroupPeer(flow)
        connection.cancel()
        return true
    }

    /// The engine flow that stands for the group, for its streams.
    var multiplexFlow: Flow? { connection?.flow }

    /// The connection that stands for a multiplex group (the QUIC connection), nil for others.
    var multiplexConnection: NWConnection? { connection }

    /// The metadata of one protocol of the group's connection (QUIC, TLS), nil for others.
    public final func metadata(definition: NWProtocolDefinition) -> NWProtocolMetadata? {
        connection?.metadata(definition: definition)
    }

    // MARK: - Messages

    /// Sets the handler of the group's messages (for a QUIC group, the datagrams the peer
    /// sends, each complete), called on the queue. A message larger than `maximumMessageSize`
    /// is dropped when `rejectOversizedMessages`, else cut to that size and marked incomplete.
    /// A QUIC group's datagrams that arrive before a handler is set wait for it (a bounded number
    /// of them); a multicast group's are dropped, as a socket nobody reads drops them.
    @preconcurrency
    public final func setReceiveHandler(
        maximumMessageSize: Int = Int.max, rejectOversizedMessages: Bool = true,
        handler: (@Sendable (Message, Data?, Bool) -> Void)?
    ) {
        shared.withLock { shared in
            shared.receiveHandler = handler
            shared.receiveLimit = (max(0, maximumMessageSize), rejectOversizedMessages)
        }
        startReceiving()
    }

    /// Sends a message to the group: for a QUIC group, one datagram on the connection (its one
    /// member, whatever `endpoint` says). The completion gets `EMSGSIZE` for a datagram larger
    /// than the connection's ``NWConnection/maximumDatagramSize`` and `EPROTONOSUPPORT` when
    /// the peer takes no datagrams. For a multicast group, one datagram to every group address,
    /// or to `endpoint` alone (a member, or a sender to answer), from the group's port; before
    /// the group is ready the completion gets `ENOTCONN`.
    @preconcurrency
    public final func send(
        content: Data?, to endpoint: NWEndpoint? = nil, message: Message = .default,
        completion: @escaping @Sendable (NWError?) -> Void
    ) {
        if let multicastEngine {
            sendMulticast(content, to: endpoint, message: message, on: multicastEngine, completion: completion)
            return
        }
        guard let connection else {
            complete(completion, with: .posix(.EPROTONOSUPPORT))
            return
        }
        connection.send(content: content, contentContext: message, isComplete: true, completion: .contentProcessed(completion))
    }

    /// Calls a send's `completion` with `error` on the queue (at once before the group started).
    func complete(_ completion: @escaping @Sendable (NWError?) -> Void, with error: NWError?) {
        if let queue { queue.async { completion(error) } } else { completion(error) }
    }

    /// Reads the connection's datagrams for the receive handler, once the group is ready and a
    /// handler is set; until the connection ends.
    private func startReceiving() {
        guard let connection else { return }
        let start = shared.withLock { shared -> Bool in
            guard shared.state == .ready, shared.receiveHandler != nil, !shared.receiving else { return false }
            shared.receiving = true
            return true
        }
        if start { receiveNext(on: connection) }
    }

    private func receiveNext(on connection: NWConnection) {
        connection.receiveMessage { [weak self] data, _, _, error in
            // An error ends the loop; the group's state says why.
            guard let self, error == nil else { return }
            let (handler, limit) = self.shared.withLock { ($0.receiveHandler, $0.receiveLimit) }
            if let handler, let data, data.count <= limit.size || !limit.rejectsOversized {
                let fits = data.count <= limit.size
                handler(Message(receivedFrom: connection.endpoint, in: self), fits ? data : data.prefix(limit.size), fits)
            }
            self.receiveNext(on: connection)
        }
    }
}
