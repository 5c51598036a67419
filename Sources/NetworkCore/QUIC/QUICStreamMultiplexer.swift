#if canImport(Glibc)
import Glibc
#endif
import DequeModule
import NIOCore

/// The streams of one QUIC connection that a connection group owns: each stream, opened by this
/// side or by the peer, is a `QUICStreamChannel` with a flow of its own, while the group's flow
/// sits on the UDP channel and stands for the connection (ready after the handshake; its close
/// closes the connection). This is the owner of the connection's `QUICDatagramHandler` (event
/// mode). Confined to the connection's event loop.
final class QUICStreamMultiplexer {
    /// Makes a flow for a stream the peer opened (on the loop; the channel is not active yet).
    typealias PeerStreamAdopter = (QUICStreamChannel) throws -> Flow

    private weak var handler: QUICDatagramHandler?
    private var streams: [Int64: QUICStreamChannel] = [:]
    private var handshake: EventLoopPromise<TLSSessionFacts>?
    /// The session's facts, for the streams' flows.
    private(set) var sessionFacts: TLSSessionFacts?
    private let adoptPeerStream: PeerStreamAdopter
    /// Flows of streams the peer opened before the group took them (at most the stream limit
    /// this side announced), and the group's taker once it is there.
    private var unclaimedPeerFlows: [Flow] = []
    private var peerStreamTaker: ((Flow) -> Void)?
    /// Opens waiting for the peer to allow more streams, per kind (bidirectional: true).
    private var waitingOpens: [Bool: Deque<(Result<QUICStreamChannel, FlowError>) -> Void>] = [:]
    private var ended: FlowError?
    /// The peer's stream events that came before the handshake was done (0-RTT data).
    private var earlyEvents: [QUICEvent] = []

    init(handshake: EventLoopPromise<TLSSessionFacts>, adoptPeerStream: @escaping PeerStreamAdopter) {
        self.handshake = handshake
        self.adoptPeerStream = adoptPeerStream
    }

    /// The handler that carries the connection, in event mode, reporting to this multiplexer.
    func makeHandler(binding: @escaping QUICDatagramHandler.BindingFactory) -> QUICDatagramHandler {
        let handler = QUICDatagramHandler(binding: binding, onEvent: { [self] event in handle(event) })
        handler.multiplexer = self
        handler.afterEachPass = { [unowned self] in writesProgressed() }
        self.handler = handler
        return handler
    }

    // MARK: - From the group

    /// Streams the peer opens go to `taker` from now on, those that came before first.
    func takePeerStreams(_ taker: @escaping (Flow) -> Void) {
        peerStreamTaker = taker
        let flows = unclaimedPeerFlows
        unclaimedPeerFlows = []
        for flow in flows { taker(flow) }
    }

    /// Opens a stream of this side, now or once the peer allows another of its kind.
    func openStream(bidirectional: Bool, _ completion: @escaping (Result<QUICStreamChannel, FlowError>) -> Void) {
        if let ended {
            completion(.failure(ended))
            return
        }
        guard waitingOpens[bidirectional]?.isEmpty != false, let channel = tryOpen(bidirectional: bidirectional) else {
            waitingOpens[bidirectional, default: []].append(completion)
            return
        }
        completion(.success(channel))
    }

    private func tryOpen(bidirectional: Bool) -> QUICStreamChannel? {
        guard let handler, let parent = handler.channel, let stream = handler.openStream(bidirectional: bidirectional) else {
            return nil
        }
        let channel = QUICStreamChannel(stream: stream, multiplexer: self, parent: parent, openedHere: true)
        streams[stream] = channel
        return channel
    }

    // MARK: - From the stream channels

    func send(_ bytes: ByteBuffer, on stream: Int64, fin: Bool) -> Bool {
        handler?.queue(bytes, on: stream, fin: fin) ?? false
    }

    func flush() {
        handler?.driveNow()
    }

    func consumed(_ count: Int, on stream: Int64) {
        handler?.consumed(count, on: stream)
    }

    /// A graceful close of this side's stream channel.
    func closeStream(_ stream: Int64, finish: Bool, stopReading: Bool) {
        if finish { _ = handler?.queue(ByteBuffer(), on: stream, fin: true) }
        if stopReading { handler?.binding?.stopReading(stream, applicationError: 0) }
        handler?.driveNow()
    }

    func resetStream(_ stream: Int64, applicationError: UInt64) {
        handler?.binding?.reset(stream, applicationError: applicationError)
        handler?.driveNow()
    }

    func streamChannelClosed(_ stream: Int64) {
        streams[stream] = nil
    }

    // MARK: - Events

    private func handle(_ event: QUICEvent) {
        if sessionFacts == nil, Self.waitsForHandshake(event) {
            // 0-RTT streams of a resuming client: they reach the application once the handshake
            // is done (and the client verified, where required), with the session's facts.
            earlyEvents.append(event)
            return
        }
        switch event {
        case .established(let facts):
            sessionFacts = facts
            handshake?.succeed(facts)
            handshake = nil
            let early = earlyEvents
            earlyEvents = []
            for event in early { handle(event) }
        case .verificationNeeded(let chain):
            handler?.askVerifyBlock(chain)
        case .streamOpened(let stream):
            peerOpened(stream)
        case .streamData(let stream, let bytes, let isFinal):
            if let channel = streams[stream] {
                channel.received(bytes, isFinal: isFinal)
            } else if bytes.readableBytes > 0 {
                // A stream whose channel is closed: its bytes are dropped (it was asked to stop).
                handler?.consumed(bytes.readableBytes, on: stream)
            }
        case .streamReset(let stream, _):
            streams[stream]?.failed(.posix(ECONNRESET))
        case .streamsAvailable(let bidirectional):
            while waitingOpens[bidirectional]?.isEmpty == false, let channel = tryOpen(bidirectional: bidirectional) {
                waitingOpens[bidirectional]?.removeFirst()(.success(channel))
            }
        case .streamClosed, .datagram:
            // (Datagrams go to the group's flow: `QUICDatagramHandler.carryDatagrams`.)
            break
        case .closed(let error):
            let reason = error ?? .posix(ECONNABORTED)
            ended = reason
            earlyEvents.removeAll()
            let wasEstablishing = handshake != nil
            handshake?.fail(reason)
            handshake = nil
            for open in waitingOpens.values.joined() { open(.failure(reason)) }
            waitingOpens.removeAll()
            for channel in Array(streams.values) { channel.failed(reason) }
            streams.removeAll()
            unclaimedPeerFlows.removeAll()
            // The group's flow fails with the connection (after the handshake; before it, the
            // handshake's failure fails the attempt).
            if !wasEstablishing { handler?.failFlowAbove(reason) }
        }
    }

    /// Whether `event` concerns the peer's streams, which wait for the handshake.
    private static func waitsForHandshake(_ event: QUICEvent) -> Bool {
        switch event {
        case .streamOpened, .streamData, .streamReset, .streamClosed: return true
        case .established, .verificationNeeded, .datagram, .streamsAvailable, .closed: return false
        }
    }

    private func peerOpened(_ stream: Int64) {
        guard let handler, let parent = handler.channel else { return }
        let channel = QUICStreamChannel(stream: stream, multiplexer: self, parent: parent, openedHere: false)
        streams[stream] = channel
        do {
            let flow = try adoptPeerStream(channel)
            flow.carryPeerStream(channel, sessionFacts: sessionFacts.map { StackSessionBox(tls: $0) })
            channel.activate()
            if let peerStreamTaker {
                peerStreamTaker(flow)
            } else {
                unclaimedPeerFlows.append(flow)
            }
        } catch {
            channel.reset(applicationError: 0)
        }
    }

    /// ngtcp2 took more of the streams' bytes: their writes complete.
    private func writesProgressed() {
        guard let binding = handler?.binding, !streams.isEmpty else { return }
        for (stream, channel) in streams { channel.sent(upTo: binding.sentOffset(on: stream)) }
    }
}
