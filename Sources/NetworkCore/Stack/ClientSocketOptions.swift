#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NetworkSystem

/// The socket options of an outbound connection attempt, from the flow's parameters: the
/// transport's (TCP or UDP), IP's and the traffic class, address reuse, and the required
/// interface. A UNIX-domain socket takes none of the IP or TCP ones.
enum ClientSocketOptions {
    static func settings(
        for address: SocketAddress, configuration: FlowConfiguration, interfaceIndex: Int?
    ) -> [SocketOptionSetting] {
        let family: SocketFamily = address.protocol == .inet6 ? .inet6 : .inet
        var options: [SocketOptionSetting] = []
        let isUnix = address.protocol == .unix
        switch configuration.transport {
        case .tcp:
            if !isUnix {
                options += SocketOptionPlan.tcp(configuration.tcp)
                // NIO turns Nagle off by default; Apple leaves it on unless `noDelay` is set.
                options.append(.init(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: configuration.tcp.noDelay ? 1 : 0))
            }
        case .udp, .quic, .quicDatagram:
            options += SocketOptionPlan.udp(configuration.udp)
            if configuration.transport == .udp && family == .inet {
                // Linux refuses a destination that is a broadcast address (255.255.255.255, a
                // subnet's) with EACCES unless the socket allows it; Apple's UDP connections send
                // to them. The flag permits nothing else.
                options.append(.init(level: SOL_SOCKET, name: SO_BROADCAST, value: 1))
            }
        }
        if !isUnix {
            options += SocketOptionPlan.ip(configuration.ip, family: family, datagram: configuration.transport.usesDatagramSocket)
            options += SocketOptionPlan.trafficClass(configuration.trafficClass, family: family)
        }
        if configuration.allowLocalEndpointReuse {
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1))
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEPORT, value: 1))
        }
        if let interfaceIndex {
            options.append(.init(level: SOL_SOCKET, name: InterfaceSelection.soBindToIfindex, value: Int32(interfaceIndex)))
        }
        return options
    }
}
