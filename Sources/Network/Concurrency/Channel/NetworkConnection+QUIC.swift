import Foundation
import NetworkCore
import NetworkSync

/// A QUIC connection's streams and datagrams. The connection itself starts with `start()` or
/// with the first of these, and is ready once its handshake is done (and the server verified).
extension NetworkConnection where ApplicationProtocol == QUIC {
    /// Opens a stream of this side (bidirectional by default); starts the connection if needed
    /// and waits for it, and for the peer to allow another stream if its limit is reached.
    /// Throws the connection's error if it fails.
    public final func openStream(directionality: QUICStream.Directionality = .bidirectional) async throws -> QUIC.Stream<QUICStream> {
        try await openStream(directionality: directionality, applicationProtocol: QUICStream())
    }

    /// Opens a stream with the message protocols `prepending` puts above it (`TLV`, `Coder`,
    /// `Framer`: framers run above QUIC streams); others throw `EPROTONOSUPPORT`.
    public final func openStream<NewAP: OneToOneProtocol>(
        directionality: QUICStream.Directionality = .bidirectional, @ProtocolStackBuilder<NewAP> _ prepending: (QUICStream) -> NewAP
    ) async throws -> QUIC.Stream<NewAP> {
        let top = prepending(QUICStream())
        var plan = StackPlan()
        UnsupportedStackLayer.layer(top).addLayers(to: &plan)
        guard !plan.unsupported, plan.transport == nil else { throw NWError.posix(.EPROTONOSUPPORT) }
        return try await openStream(directionality: directionality, applicationProtocol: top, above: plan.application)
    }

    private func openStream<NewAP: NetworkProtocolOptions>(
        directionality: QUICStream.Directionality, applicationProtocol: NewAP, above: [NWProtocolOptions] = []
    ) async throws -> QUIC.Stream<NewAP> {
        try await core.waitUntilReady()
        let parameters = core.connection.parameters.copy()
        parameters.defaultProtocolStack.applicationProtocols = above
        guard let quic = parameters.defaultProtocolStack.transportProtocol?.copyOptions() as? NWProtocolQUIC.Options else {
            throw NWError.posix(.EPROTONOSUPPORT)
        }
        quic.direction = directionality == .unidirectional ? .unidirectional : .bidirectional
        let connection = NWConnection(streamOf: core.flow, endpoint: core.connection.endpoint, parameters: parameters, options: quic)
        let stream = QUIC.Stream(
            connection: connection, applicationProtocol: applicationProtocol, parent: self, directionality: directionality,
            initiator: core.accepted ? .server : .client, accepted: false)
        try await stream.core.waitUntilReady()
        return stream
    }

    /// Runs `handler` for each stream the peer opens, each in a child task of its own, from now
    /// until the connection ends (streams that came before this call first). Starts the
    /// connection if needed. Returns when the connection is cancelled, throws its error when it
    /// fails; cancelling the calling task cancels the connection. Call it once.
    public final func inboundStreams(
        _ handler: @escaping @isolated(any) @Sendable (QUIC.Stream<QUICStream>) async throws -> Void
    ) async throws {
        try await acceptStreams(applicationProtocol: QUICStream(), handler)
    }

    /// ``inboundStreams(_:)`` with `prepending` protocols above each stream (`TLV`, `Coder`,
    /// `Framer`: framers run above the peer's streams as above this side's); others throw
    /// `EPROTONOSUPPORT`.
    public final func inboundStreams<NewAP: OneToOneProtocol>(
        @ProtocolStackBuilder<NewAP> prepending: @escaping (QUICStream) -> NewAP,
        _ handler: @escaping @isolated(any) @Sendable (QUIC.Stream<NewAP>) async throws -> Void
    ) async throws {
        let top = prepending(QUICStream())
        var plan = StackPlan()
        UnsupportedStackLayer.layer(top).addLayers(to: &plan)
        guard !plan.unsupported, plan.transport == nil else { throw NWError.posix(.EPROTONOSUPPORT) }
        guard !plan.application.isEmpty else { return try await acceptStreams(applicationProtocol: top, handler) }
        let parameters = core.connection.parameters.copy()
        parameters.defaultProtocolStack.applicationProtocols = plan.application
        let configuration = parameters.flowConfiguration(target: .unix(path: ""), listener: core.accepted)
        // A peer's stream is set up again with framers only: TLS or WebSocket above it would
        // need a handshake of their own, which streams do not do here.
        guard configuration.unsupported == nil, configuration.framers.count == plan.application.count else {
            throw NWError.posix(.EPROTONOSUPPORT)
        }
        try await acceptStreams(applicationProtocol: top, parameters: parameters, restacking: configuration, handler)
    }

    /// `parameters` (the connection's by default) are each stream's; with `restacking`, each
    /// stream is set up again with that configuration's framers when it is taken.
    private func acceptStreams<NewAP: NetworkProtocolOptions>(
        applicationProtocol: NewAP, parameters: NWParameters? = nil, restacking: FlowConfiguration? = nil,
        _ handler: @escaping @isolated(any) @Sendable (QUIC.Stream<NewAP>) async throws -> Void
    ) async throws {
        try await core.waitUntilReady()
        let (streams, continuation) = AsyncStream.makeStream(of: (flow: Flow, unidirectional: Bool).self)
        let endpoint = core.connection.endpoint
        let parameters = parameters ?? core.connection.parameters
        let initiator: QUICStream.Initiator = core.accepted ? .client : .server
        // (The taker runs on the loop, where the flow's stream can be asked.)
        core.flow.takeQUICPeerStreams(restacking: restacking) {
            continuation.yield(($0, $0.carriesUnidirectionalQUICStreamOnLoop))
        }
        let core = self.core
        let ended = try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group -> NWConnection.State in
                group.addTask {
                    _ = await core.waitUntilEnded()
                    continuation.finish()
                }
                for await (flow, unidirectional) in streams {
                    let connection = NWConnection(accepted: flow, endpoint: endpoint, parameters: parameters)
                    let stream = QUIC.Stream(
                        connection: connection, applicationProtocol: applicationProtocol, parent: self,
                        directionality: unidirectional ? .unidirectional : .bidirectional, initiator: initiator, accepted: true)
                    stream.core.startIfNeeded()
                    // On the stream's loop: its sends and receives cross no thread.
                    group.addTask(executorPreference: stream.core.taskExecutor) {
                        do {
                            try await stream.core.scope.run(cancelling: stream.core) { try await handler(stream) }
                        } catch {
                            // (Its own failure: the stream ends, the connection goes on.)
                            stream.core.connection.forceCancel()
                        }
                    }
                }
                return await core.waitUntilEnded()
            }
        } onCancel: {
            continuation.finish()
            core.cancel()
        }
        if Task.isCancelled { throw CancellationError() }
        if case .failed(let error) = ended { throw error }
    }

    /// The connection's QUIC datagrams (RFC 9221), the same object on each access; starts the
    /// connection if needed and waits until it is ready.
    public final var datagrams: QUIC.Datagrams<QUICDatagram> {
        get async throws {
            try await core.waitUntilReady()
            // Kept weakly: the datagrams hold their connection, and both go once released.
            return multiplexChildren.withLock { children in
                if let datagrams = children.datagrams as? QUIC.Datagrams<QUICDatagram> { return datagrams }
                let made = QUIC.Datagrams(parent: self, applicationProtocol: QUICDatagram())
                children.datagrams = made
                return made
            }
        }
    }
}
