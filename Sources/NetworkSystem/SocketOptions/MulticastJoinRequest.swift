#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The socket option that joins a multicast group, in the protocol-independent form (RFC 3678:
/// `MCAST_JOIN_GROUP` with a `group_req`, `MCAST_JOIN_SOURCE_GROUP` with a `group_source_req`),
/// which takes IPv4 and IPv6 groups alike and, unlike `IP_ADD_MEMBERSHIP`, a source filter. The
/// kernel leaves every group when the socket closes.
package enum MulticastJoinRequest: Sendable {
    /// Any-source membership (ASM).
    case anySource(level: Int32, request: group_req)
    /// Source-specific membership (SSM, RFC 4607): only datagrams from the source arrive.
    case sourceSpecific(level: Int32, request: group_source_req)

    /// `MCAST_JOIN_GROUP` (<bits/in.h>, Linux 2.6.15).
    package static let joinGroup: Int32 = 42
    /// `MCAST_JOIN_SOURCE_GROUP` (<bits/in.h>, Linux 2.6.15).
    package static let joinSourceGroup: Int32 = 46

    /// The request joining `group` (a `sockaddr_in` or `sockaddr_in6`) on the interface with
    /// index `interfaceIndex` (0: the one the route to the group takes), from `source` only when
    /// given (of the group's family). Nil when an address is not IPv4 or IPv6, or the families
    /// differ.
    package init?(group: UnsafeRawBufferPointer, source: UnsafeRawBufferPointer?, interfaceIndex: UInt32) {
        guard let family = Self.family(of: group) else { return nil }
        let level = family == sa_family_t(AF_INET) ? Int32(IPPROTO_IP) : Int32(IPPROTO_IPV6)
        if let source {
            guard Self.family(of: source) == family else { return nil }
            var request = group_source_req()
            request.gsr_interface = interfaceIndex
            Self.copy(group, into: &request.gsr_group)
            Self.copy(source, into: &request.gsr_source)
            self = .sourceSpecific(level: level, request: request)
        } else {
            var request = group_req()
            request.gr_interface = interfaceIndex
            Self.copy(group, into: &request.gr_group)
            self = .anySource(level: level, request: request)
        }
    }

    /// The option's level (`IPPROTO_IP` or `IPPROTO_IPV6`, the group's family).
    package var level: Int32 {
        switch self {
        case .anySource(let level, _), .sourceSpecific(let level, _): level
        }
    }

    /// The option's name.
    package var name: Int32 {
        switch self {
        case .anySource: Self.joinGroup
        case .sourceSpecific: Self.joinSourceGroup
        }
    }

    private static func family(of address: UnsafeRawBufferPointer) -> sa_family_t? {
        guard address.count >= MemoryLayout<sa_family_t>.size else { return nil }
        let family = address.loadUnaligned(as: sa_family_t.self)
        switch Int32(family) {
        case AF_INET where address.count >= MemoryLayout<sockaddr_in>.size: return family
        case AF_INET6 where address.count >= MemoryLayout<sockaddr_in6>.size: return family
        default: return nil
        }
    }

    private static func copy(_ address: UnsafeRawBufferPointer, into storage: inout sockaddr_storage) {
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: address.prefix(target.count)))
        }
    }
}
