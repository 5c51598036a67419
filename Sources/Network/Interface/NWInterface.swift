import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A network interface of this machine (for example `lo` or `eth0`), as seen by the framework.
///
/// Values are produced by the framework — by path snapshots, browse results and scoped addresses —
/// and cannot be created by applications. Two interfaces are equal when their kernel index and
/// their name are equal; the classification in ``type`` does not take part in equality.
public struct NWInterface: CustomDebugStringConvertible, Equatable, Hashable, Sendable {

    /// The broad category an interface belongs to.
    public enum InterfaceType: Equatable, Hashable, Sendable {
        /// An interface that fits none of the other categories (for example a tunnel or a bridge),
        /// or one that could not be classified. As a requirement it means "any interface".
        case other
        /// A Wi-Fi (IEEE 802.11) interface.
        case wifi
        /// A cellular modem (WWAN) interface.
        case cellular
        /// A wired Ethernet interface.
        case wiredEthernet
        /// The loopback interface.
        case loopback
    }

    /// The radio technology an interface uses, when it has a radio.
    public enum RadioType: Sendable {
        /// The Wi-Fi standards an interface can be associated with.
        public enum WiFi: Sendable {
            /// IEEE 802.11a.
            case a
            /// IEEE 802.11b.
            case b
            /// IEEE 802.11g.
            case g
            /// IEEE 802.11n (Wi-Fi 4).
            case n
            /// IEEE 802.11ac (Wi-Fi 5).
            case ac
            /// IEEE 802.11ax (Wi-Fi 6).
            case ax
        }

        /// The cellular radio access technologies.
        public enum Cellular: Sendable {
            /// The flavours of 5G New Radio, by frequency range.
            public enum NewRadio5GVariant: Sendable {
                /// Frequencies below 6 GHz (FR1).
                case sub6GHz
                /// Millimetre-wave frequencies (FR2).
                case mmWave
            }

            /// GSM (2G).
            case gsm
            /// CDMA (2G).
            case cdma
            /// EV-DO (3G on CDMA networks).
            case evdo
            /// WCDMA / UMTS (3G).
            case wcdma
            /// LTE (4G).
            case lte
            /// 5G New Radio on a 5G core network (standalone).
            case standalone5G(NewRadio5GVariant)
            /// 5G New Radio anchored on an LTE network (non-standalone, dual connectivity).
            case dualConnectivity5G(NewRadio5GVariant)
        }

        /// A Wi-Fi radio using the given standard.
        case wifi(WiFi)
        /// A cellular radio using the given technology.
        case cell(Cellular)
    }

    /// The interface's name as the kernel knows it, such as `lo` or `eth0`.
    public let name: String

    /// The kernel's index for the interface (what `if_nametoindex(3)` returns).
    public let index: Int

    /// The category of the interface. (Declared last, so no padding follows the one-byte field:
    /// the value is stored in every endpoint, and so in every connection.)
    public let type: InterfaceType

    /// Creates an interface value from facts the engine already knows.
    package init(name: String, index: Int, type: InterfaceType) {
        self.name = name
        self.index = index
        self.type = type
    }

    /// The interface's name.
    public var debugDescription: String { name }

    /// Interfaces are equal when both their index and their name match.
    public static func == (lhs: NWInterface, rhs: NWInterface) -> Bool {
        lhs.index == rhs.index && lhs.name == rhs.name
    }

    /// Hashes the index and the name, the same values ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(name)
    }
}

extension NWInterface {
    /// Looks an interface up by name in the running system (`if_nametoindex`).
    ///
    /// Returns nil when no interface of that name exists. The type is `.loopback` for a loopback
    /// interface and `.other` otherwise; the engine's path monitor does the full classification.
    package init?(systemInterfaceNamed name: String) {
        guard !name.isEmpty, !name.contains("/") else { return nil }
        let index = if_nametoindex(name)
        guard index != 0 else { return nil }
        self.init(name: name, index: Int(index), type: NWInterface.quickType(ofInterfaceNamed: name))
    }

    /// Looks an interface up by kernel index in the running system (`if_indextoname`), for
    /// example to turn the scope id of a `sockaddr_in6` into an interface.
    package init?(systemInterfaceIndex index: Int) {
        guard index > 0, index <= Int(UInt32.max) else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(index), &buffer) != nil else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.init(name: name, index: index, type: NWInterface.quickType(ofInterfaceNamed: name))
    }

    /// `.loopback` when the kernel flags the interface as loopback (or, if sysfs cannot be read,
    /// when it is called `lo`); `.other` otherwise.
    private static func quickType(ofInterfaceNamed name: String) -> InterfaceType {
        let flagsPath = "/sys/class/net/\(name)/flags"
        if let text = try? String(contentsOfFile: flagsPath, encoding: .utf8) {
            var digits = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if digits.hasPrefix("0x") { digits.removeFirst(2) }
            if let flags = UInt32(digits, radix: 16) {
                // IFF_LOOPBACK is 0x8 in <net/if.h>.
                return flags & 0x8 != 0 ? .loopback : .other
            }
        }
        return name == "lo" ? .loopback : .other
    }
}
