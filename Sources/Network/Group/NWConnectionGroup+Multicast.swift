import Dispatch
import Foundation
import NetworkCore

/// A multicast group (``NWMulticastGroup`` over UDP): the engine's listener in group mode binds
/// the groups' port, joins them and hands over every datagram.
extension NWConnectionGroup {
    /// How many received datagrams may wait for the queue at once. A group that cannot keep up
    /// with what arrives drops the rest, as its socket's buffer would; without this bound a flood
    /// would queue work on the queue without end.
    static let maximumPendingDeliveries = 4096

    /// The engine's socket for `group`, nil when the parameters are not plain UDP (the group then
    /// fails with `EPROTONOSUPPORT` when started) or `group`'s addresses cannot be joined.
    static func multicastEngine(for group: NWMulticastGroup, using parameters: NWParameters) -> FlowListener? {
        guard parameters.flowTransport == .udp, parameters.defaultProtocolStack.applicationProtocols.isEmpty,
            var configuration = try? NWListener.engineConfiguration(for: parameters, on: group.port)
        else { return nil }
        configuration.multicast = group.membership
        if configuration.localInterfaceName == nil {
            // A scoped IPv6 group (ff02::1%eth0) names the interface to join on.
            configuration.localInterfaceName = group.members.lazy.compactMap { member -> String? in
                guard case .hostPort(.ipv6(let address), _) = member else { return nil }
                return address.interface?.name
            }.first
        }
        if let required = parameters.requiredInterface?.name { configuration.localInterfaceName = required }
        return FlowListener(configuration: configuration)
    }

    func startMulticast(_ engine: FlowListener, queue: DispatchQueue) {
        // The engine holds the group (and the group its handlers) until the group is cancelled.
        engine.startGroup(
            stateHandler: { [self] state in
                // (The group is in setup already.)
                if state != .setup { changeState(to: State(state), on: queue) }
            },
            datagramHandler: { [self] datagram in deliverMulticast(datagram, from: engine, on: queue) })
    }

    /// Hands one datagram to the receive handler on the queue, with its sender, where it was
    /// sent and its IP metadata; an oversized one as the handler's settings say.
    private func deliverMulticast(_ datagram: GroupDatagram, from engine: FlowListener, on queue: DispatchQueue) {
        let admitted = shared.withLock { shared -> Bool in
            guard shared.receiveHandler != nil, shared.pendingDeliveries < Self.maximumPendingDeliveries else { return false }
            shared.pendingDeliveries += 1
            return true
        }
        guard admitted else { return }
        // One wake-up of the queue for everything a turn of the loop read.
        DeliveryBatcher.forEventLoop(engine.eventLoop).enqueue(
            { [self] in
                let (handler, limit) = shared.withLock { shared in
                    shared.pendingDeliveries -= 1
                    return (shared.receiveHandler, shared.receiveLimit)
                }
                guard let handler, let remote = NWEndpoint(datagram.remote) else { return }
                let fits = datagram.data.count <= limit.size
                if !fits && limit.rejectsOversized { return }
                let message = Message(
                    receivedFrom: remote, at: datagram.local.flatMap(NWEndpoint.init), in: self,
                    metadata: [NWProtocolIP.Metadata.received(datagram.facts)])
                handler(message, fits ? datagram.data : datagram.data.prefix(limit.size), fits)
            }, on: queue)
    }

    /// Sends one datagram to the group or to `endpoint`, marked as `message`'s IP metadata asks:
    /// its ECN codepoint, and its service class when it names one (else the parameters').
    func sendMulticast(
        _ content: Data?, to endpoint: NWEndpoint?, message: Message, on engine: FlowListener,
        completion: @escaping @Sendable (NWError?) -> Void
    ) {
        var target: FlowTarget?
        if let endpoint {
            switch endpoint.flowTarget() {
            case .success(let value): target = value
            case .failure(let error):
                complete(completion, with: NWError(error))
                return
            }
        }
        let marking = DatagramMarking(ip: message.protocolMetadata(definition: NWProtocolIP.definition) as? NWProtocolIP.Metadata)
        engine.sendGroupDatagram(content ?? Data(), to: target, ecn: marking.ecn, trafficClass: marking.trafficClass) { [self] error in
            complete(completion, with: error.map(NWError.init))
        }
    }

    /// The engine flow of a connection to `endpoint` on the group's socket, nil when the group
    /// is not a ready multicast group or `endpoint` is not an address.
    func makeMulticastPeer(to endpoint: NWEndpoint) -> Flow? {
        guard let multicastEngine, case .success(let target) = endpoint.flowTarget(),
            let flow = multicastEngine.makeGroupPeer(to: target)
        else { return nil }
        _ = shared.withLock { $0.peerFlows.insert(ObjectIdentifier(flow)) }
        return flow
    }
}
