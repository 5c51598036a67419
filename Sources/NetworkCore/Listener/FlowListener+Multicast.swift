#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NetworkDNS
import NetworkSystem

/// A multicast group's socket (`MulticastMembership`): the listener binds the groups' port, joins
/// them, and hands every datagram to the group; sends go to every group, or to one address.
extension FlowListener {
    /// Gets each datagram of a multicast group, on the listener's event loop.
    package typealias GroupDatagramHandler = @Sendable (GroupDatagram) -> Void

    /// Binds and joins the groups of the configuration's `multicast`; each datagram then goes to
    /// `datagramHandler`, the states to `stateHandler` (ready once every group is joined).
    package func startGroup(stateHandler: @escaping StateHandler, datagramHandler: @escaping GroupDatagramHandler) {
        eventLoop.execute {
            guard self.state == .setup else { return }
            NetworkLog.listener.debug(
                "start multicast group on port \(self.configuration.port)", metadata: self.logMetadata)
            self.stateHandler = stateHandler
            self.groupDatagramHandler = datagramHandler
            self.bind()
        }
    }

    /// Sends `data` as one datagram to every group (`target` nil) or to `target` (an address
    /// literal, a member or a peer to reply to), from the group's port, with the ECN codepoint
    /// `ecn` and the DSCP of `trafficClass` (nil: the parameters' own). `completion` runs on the
    /// loop once the datagrams are written, with the error of one that could not go.
    package func sendGroupDatagram(
        _ data: Data, to target: FlowTarget?, ecn: UInt8 = 0, trafficClass: TrafficClass? = nil,
        completion: @escaping @Sendable (FlowError?) -> Void
    ) {
        eventLoop.execute {
            guard let channel = self.channel, self.state == .ready else {
                completion(.posix(ENOTCONN))
                return
            }
            let destinations: [SocketAddress]
            if let target {
                if case .unix = target {
                    completion(.posix(EAFNOSUPPORT))
                    return
                }
                // (No name is resolved: a group sends to addresses.)
                guard let address = target.literalAddress else {
                    completion(.posix(EINVAL))
                    return
                }
                destinations = [Self.groupSocketForm(of: address, on: channel)]
            } else {
                destinations = self.multicastGroups.map { Self.groupSocketForm(of: $0, on: channel) }
            }
            // (Without its own socket's descriptor, a writer sends through NIO.)
            let writer = self.datagramWriter ?? DatagramWriter()
            let batch = DatagramBatch(
                bytes: channel.allocator.buffer(bytes: data), segmentSize: nil, ecn: ecn,
                dscp: trafficClass.map { SocketOptionPlan.dscp($0) ?? 0 })
            let writes = destinations.map { destination in
                let written = channel.eventLoop.makePromise(of: Void.self)
                // (A refusal fails `written` too: the sender learns of it, the group goes on.)
                _ = writer.write([batch], to: destination, through: ChannelDatagramOutbound(channel: channel), written: written)
                return written.futureResult
            }
            EventLoopFuture.andAllSucceed(writes, on: channel.eventLoop).whenComplete { result in
                switch result {
                case .success: completion(nil)
                case .failure(let error): completion(FlowError(error))
                }
            }
        }
    }

    /// The wildcard address the groups' socket binds, on the configured port: IPv4's when every
    /// group is IPv4, else IPv6's (dual-stack when IPv4 groups are among them). Throws EINVAL
    /// unless every group is a multicast address literal, and a source, if any, is a literal of
    /// every group's family.
    func multicastBindAddress(_ membership: MulticastMembership) throws -> SocketAddress {
        let groups = try membership.groups.map { literal -> SocketAddress in
            guard let address = SocketAddress(literal: literal, port: configuration.port), Self.isMulticast(address) else {
                throw FlowError.posix(EINVAL)
            }
            return address
        }
        guard !groups.isEmpty else { throw FlowError.posix(EINVAL) }
        if let source = membership.source {
            guard let address = SocketAddress(literal: source, port: 0), groups.allSatisfy({ $0.protocol == address.protocol }) else {
                throw FlowError.posix(EINVAL)
            }
        }
        multicastGroups = groups
        multicastGroupBytes = groups.map { FlowAddress($0).unmappedBytes }
        let allIPv4 = groups.allSatisfy { $0.protocol == .inet }
        return try SocketAddress(ipAddress: allIPv4 ? "0.0.0.0" : "::", port: configuration.port)
    }

    /// Whether the groups' socket is a dual-stack one: IPv6, with IPv4 groups too (known once
    /// `multicastBindAddress` ran).
    var multicastIsDualStack: Bool {
        multicastGroups.contains { $0.protocol == .inet } && multicastGroups.contains { $0.protocol == .inet6 }
    }

    /// `address` as the group's socket on `channel` sends to it: IPv4-mapped when the socket is
    /// IPv6 (a group of both families), as it is otherwise. (Joins keep the IPv4 form: they go
    /// to the IPv4 level of the socket.)
    static func groupSocketForm(of address: SocketAddress, on channel: Channel) -> SocketAddress {
        channel.localAddress?.protocol == .inet6 ? address.ipv4Mapped : address
    }

    /// Joins every group on the bound `channel`, then reports ready; a refused join (no route
    /// to the group, no such interface) fails the group with its error and closes the socket.
    func joinGroups(_ membership: MulticastMembership, on channel: Channel) {
        let interfaceIndex = configuration.localInterfaceName.map { if_nametoindex($0) } ?? 0
        // (The source literal was checked when the socket was bound.)
        let source = membership.source.flatMap { SocketAddress(literal: $0, port: 0) }
        var joins: [EventLoopFuture<Void>] = []
        for group in multicastGroups {
            let request = group.withSockAddr { groupAddress, groupLength in
                let groupBytes = UnsafeRawBufferPointer(start: groupAddress, count: groupLength)
                guard let source else {
                    return MulticastJoinRequest(group: groupBytes, source: nil, interfaceIndex: interfaceIndex)
                }
                return source.withSockAddr { sourceAddress, sourceLength in
                    MulticastJoinRequest(
                        group: groupBytes, source: UnsafeRawBufferPointer(start: sourceAddress, count: sourceLength),
                        interfaceIndex: interfaceIndex)
                }
            }
            guard let provider = channel as? SocketOptionProvider, let request else {
                joins.append(channel.eventLoop.makeFailedFuture(FlowError.posix(EINVAL)))
                continue
            }
            switch request {
            case .anySource(let level, let value):
                joins.append(provider.unsafeSetSocketOption(level: SocketOptionLevel(level), name: request.name, value: value))
            case .sourceSpecific(let level, let value):
                joins.append(provider.unsafeSetSocketOption(level: SocketOptionLevel(level), name: request.name, value: value))
            }
        }
        EventLoopFuture.andAllSucceed(joins, on: channel.eventLoop).whenComplete { result in
            guard self.state == .setup else { return }
            switch result {
            case .success:
                let writer = self.datagramWriter
                self.shared.withLock {
                    $0.groupChannel = channel
                    $0.groupWriter = writer
                }
                NetworkLog.listener.debug(
                    "joined \(membership.groups.joined(separator: ", "))\(membership.source.map { " from \($0)" } ?? "")",
                    metadata: self.logMetadata)
                self.report(.ready)
            case .failure(let error):
                self.closeChannel()
                self.report(.failed(FlowError(error)))
            }
        }
    }

    /// Hands a group's datagram over, unless unicast is disabled and it was not sent to a group:
    /// to the connection taken for its sender when there is one, else to the group.
    func receivedGroupDatagram(_ envelope: AddressedEnvelope<ByteBuffer>, membership: MulticastMembership) {
        guard state == .ready else { return }
        let stamped = configuration.child.ip.shouldCalculateReceiveTime
        if let flow = groupPeer(for: envelope.remoteAddress) {
            if flow.deliverSharedDatagram(envelope.data, facts: ReceivedDatagramFacts.of(envelope.metadata, stamped: stamped)) {
                delivered(to: flow)
            }
            return
        }
        guard let handler = groupDatagramHandler else { return }
        let destination = envelope.metadata?.packetInfo?.destinationAddress
        if membership.disableUnicast {
            let sentTo = destination.map { FlowAddress($0).unmappedBytes }
            guard let sentTo, multicastGroupBytes.contains(sentTo) else {
                logPeerEvent(.trace, "dropped a unicast datagram from \(envelope.remoteAddress.logText): the group takes multicast only")
                return
            }
        }
        // (The kernel reports the destination without a port: the group's own.)
        var local = destination
        local?.port = configuration.port
        handler(
            GroupDatagram(
                data: Data(buffer: envelope.data, byteTransferStrategy: .copy),
                remote: FlowAddress(envelope.remoteAddress),
                local: local.map(FlowAddress.init),
                facts: ReceivedDatagramFacts.of(envelope.metadata, stamped: stamped)))
    }

    /// Whether `address` is an IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
    static func isMulticast(_ address: SocketAddress) -> Bool {
        let bytes = FlowAddress(address).unmappedBytes
        switch bytes.count {
        case 4: return bytes[0] >> 4 == 0xE
        case 16: return bytes[0] == 0xFF
        default: return false
        }
    }
}
