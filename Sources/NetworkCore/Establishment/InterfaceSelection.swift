#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NetworkSystem

/// Turns `requiredInterface` / `requiredInterfaceType` / the prohibited lists into the one
/// interface a socket is bound to (SO_BINDTOIFINDEX), or an error when none qualifies.
enum InterfaceSelection {
    /// SO_BINDTOIFINDEX (Linux 5.7), missing from Glibc's Swift import.
    static let soBindToIfindex: Int32 = 62

    /// Whether a connected socket whose local address is `local` runs over an interface the
    /// parameters rule out (prohibited type or interface, expensive, constrained).
    static func violatesRestrictions(local: SocketAddress?, configuration: FlowConfiguration) -> Bool {
        let restricted = !configuration.prohibitedInterfaceTypes.isEmpty || !configuration.prohibitedInterfaceIndexes.isEmpty
            || configuration.prohibitExpensive || configuration.prohibitConstrained
        guard restricted, let local, let bytes = LocalNetworkCheck.rawBytes(local) else { return false }
        let comparable = bytes.count == 16 && bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff
            ? Array(bytes[12...]) : bytes
        guard let interface = InterfaceTable.current().first(where: { $0.addresses.contains { $0.bytes == comparable } })
        else { return false }
        return configuration.prohibitedInterfaceTypes.contains(interface.type)
            || configuration.prohibitedInterfaceIndexes.contains(interface.index)
            || (configuration.prohibitExpensive && interface.isExpensive)
            || (configuration.prohibitConstrained && interface.isConstrained)
    }

    static func requiredIndex(for configuration: FlowConfiguration) throws -> Int? {
        if let index = configuration.requiredInterfaceIndex {
            if configuration.prohibitedInterfaceIndexes.contains(index) { throw FlowError.posix(ENETDOWN) }
            let table = InterfaceTable.current()
            guard let interface = table.first(where: { $0.index == index }), interface.isUp else {
                throw FlowError.posix(ENETDOWN)
            }
            if configuration.prohibitedInterfaceTypes.contains(interface.type) { throw FlowError.posix(ENETDOWN) }
            return index
        }
        if let type = configuration.requiredInterfaceType {
            let candidates = InterfaceTable.current().filter {
                $0.type == type && $0.isUp && !configuration.prohibitedInterfaceIndexes.contains($0.index)
            }
            guard let first = candidates.first else { throw FlowError.posix(ENETDOWN) }
            return first.index
        }
        return nil
    }
}
