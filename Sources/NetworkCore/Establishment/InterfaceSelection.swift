#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NetworkSystem

/// Turns `requiredInterface` / `requiredInterfaceType` / the prohibited lists into the one
/// interface a socket is bound to (SO_BINDTOIFINDEX), or an error when none qualifies.
enum InterfaceSelection {
    /// SO_BINDTOIFINDEX (Linux 5.7), missing from Glibc's Swift import.
    static let soBindToIfindex: Int32 = 62

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
