// Plain-value descriptions of the socket knobs the public protocol options expose.
// `Network` fills these from NWProtocolTCP/UDP/IP.Options; NetworkCore asks
// `SocketOptionPlan` which setsockopt calls they mean. Zero / false means "system default".

/// TCP knobs, field for field the ones of `NWProtocolTCP.Options` (the flags after the numbers,
/// so they share one word: every connection keeps a copy until it is ready).
package struct TCPSocketSettings: Sendable, Equatable {
    package var keepaliveCount = 0
    package var keepaliveIdle = 0
    package var keepaliveInterval = 0
    package var maximumSegmentSize = 0
    package var connectionTimeout = 0
    package var persistTimeout = 0
    package var connectionDropTime = 0
    package var noDelay = false
    package var noPush = false
    package var noOptions = false
    package var enableKeepalive = false
    package var retransmitFinDrop = false
    package var disableAckStretching = false
    package var enableFastOpen = false
    package var disableECN = false
    package init() {}
}

/// IP knobs, field for field the ones of `NWProtocolIP.Options`.
package struct IPSocketSettings: Sendable, Equatable {
    package enum Version: Sendable, Equatable { case any, v4, v6 }
    package enum AddressPreference: Sendable, Equatable { case `default`, temporary, stable }
    package var version: Version = .any
    package var hopLimit: UInt8 = 0
    package var useMinimumMTU = false
    package var disableFragmentation = false
    package var shouldCalculateReceiveTime = false
    package var localAddressPreference: AddressPreference = .default
    package var disableMulticastLoopback = false
    package init() {}
}

/// UDP knobs, field for field the ones of `NWProtocolUDP.Options`.
package struct UDPSocketSettings: Sendable, Equatable {
    package var preferNoChecksum = false
    package init() {}
}

/// Traffic class, as `NWParameters.ServiceClass`.
package enum TrafficClass: Sendable, Equatable {
    case bestEffort, background, interactiveVideo, interactiveVoice, responsiveData, signaling
}

/// The address family a socket is (or will be) created with.
package enum SocketFamily: Sendable, Equatable { case inet, inet6 }

/// One `setsockopt` call with an `Int32` value.
package struct SocketOptionSetting: Sendable, Equatable, CustomStringConvertible {
    package var level: Int32
    package var name: Int32
    package var value: Int32
    package init(level: Int32, name: Int32, value: Int32) {
        self.level = level
        self.name = name
        self.value = value
    }
    package var description: String { "setsockopt(\(level), \(name), \(value))" }
}
