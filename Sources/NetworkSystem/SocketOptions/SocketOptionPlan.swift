#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which `setsockopt` calls the protocol-option knobs mean on Linux.
///
/// Every function is pure (apart from `KernelTCPTimers.current`, read once from `/proc`): it turns
/// plain settings into an ordered list of `SocketOptionSetting`s that `SocketOptions.apply` (or a
/// NIO channel option) performs. A zero / false knob means "leave the system default": nothing is
/// emitted for it. Values outside what the kernel accepts are clamped into its range rather than
/// failing the connection. The full table, with the knobs Linux has no equivalent for, is in
/// `docs/socket-options.md`.
package enum SocketOptionPlan {
    /// Length of the TCP Fast Open queue a listener asks for (`TCP_FASTOPEN`); Apple exposes no knob.
    package static let fastOpenQueueLength: Int32 = 128
    /// The IPv6 minimum link MTU (RFC 8200 section 5).
    package static let ipv6MinimumMTU: Int32 = 1280
    /// MSS that fits the IPv6 minimum MTU: 1280 - 40 (IPv6 header) - 20 (TCP header).
    package static let ipv6MinimumMTUSegmentSize: Int32 = 1220

    // MARK: TCP

    /// The options of a connecting (client) TCP socket. Apply before `connect(2)`.
    package static func tcp(_ s: TCPSocketSettings, kernel: KernelTCPTimers = .current) -> [SocketOptionSetting] {
        var out = commonTCP(s)
        if s.connectionTimeout > 0 {
            // The engine enforces the timeout with its own timer; TCP_SYNCNT only makes sure the
            // kernel keeps retransmitting SYNs at least that long (its default gives up earlier
            // than a long timeout).
            out.append(.init(level: SocketLevel.tcp, name: TCP_SYNCNT,
                             value: synRetries(forTimeout: s.connectionTimeout, kernel: kernel)))
        }
        if s.enableFastOpen {
            out.append(.init(level: SocketLevel.tcp, name: TCP_FASTOPEN_CONNECT, value: 1))
        }
        return out
    }

    /// The options of a listening TCP socket. Apply before `listen(2)`; accepted sockets inherit
    /// every TCP and socket-level option set here.
    package static func tcpListener(_ s: TCPSocketSettings) -> [SocketOptionSetting] {
        var out = commonTCP(s)
        if s.enableFastOpen {
            out.append(.init(level: SocketLevel.tcp, name: TCP_FASTOPEN, value: fastOpenQueueLength))
        }
        return out
    }

    private static func commonTCP(_ s: TCPSocketSettings) -> [SocketOptionSetting] {
        var out: [SocketOptionSetting] = []
        let tcp = SocketLevel.tcp
        if s.noDelay { out.append(.init(level: tcp, name: TCP_NODELAY, value: 1)) }
        if s.noPush { out.append(.init(level: tcp, name: TCP_CORK, value: 1)) }
        if s.enableKeepalive { out.append(.init(level: SocketLevel.socket, name: SO_KEEPALIVE, value: 1)) }
        if s.keepaliveCount > 0 {
            out.append(.init(level: tcp, name: TCP_KEEPCNT,
                             value: clamp(s.keepaliveCount, 1, LinuxConstants.MAX_TCP_KEEPCNT)))
        }
        if s.keepaliveIdle > 0 {
            out.append(.init(level: tcp, name: TCP_KEEPIDLE,
                             value: clamp(s.keepaliveIdle, 1, LinuxConstants.MAX_TCP_KEEPIDLE)))
        }
        if s.keepaliveInterval > 0 {
            out.append(.init(level: tcp, name: TCP_KEEPINTVL,
                             value: clamp(s.keepaliveInterval, 1, LinuxConstants.MAX_TCP_KEEPINTVL)))
        }
        if s.maximumSegmentSize > 0 {
            out.append(.init(level: tcp, name: TCP_MAXSEG,
                             value: clamp(s.maximumSegmentSize, LinuxConstants.TCP_MIN_MSS, LinuxConstants.MAX_TCP_WINDOW)))
        }
        // connectionDropTime is TCP_USER_TIMEOUT exactly. persistTimeout has no Linux knob of its
        // own; since Linux 5.11 TCP_USER_TIMEOUT also bounds zero-window probing, so it stands in
        // for persistTimeout when connectionDropTime is not set (see docs/socket-options.md).
        let dropSeconds = s.connectionDropTime > 0 ? s.connectionDropTime : s.persistTimeout
        if dropSeconds > 0 {
            out.append(.init(level: tcp, name: TCP_USER_TIMEOUT, value: milliseconds(dropSeconds)))
        }
        if s.disableAckStretching { out.append(.init(level: tcp, name: TCP_QUICKACK, value: 1)) }
        // noOptions, retransmitFinDrop, disableECN: no per-socket equivalent on Linux.
        return out
    }

    /// The smallest `TCP_SYNCNT` with which the kernel keeps retrying a SYN for at least
    /// `seconds`, given its retransmission schedule (linear 1 s timeouts for the first
    /// `net.ipv4.tcp_syn_linear_timeouts` retries, then doubling, capped at `tcp_rto_max_ms`).
    package static func synRetries(forTimeout seconds: Int, kernel: KernelTCPTimers = .current) -> Int32 {
        var rto = LinuxConstants.TCP_TIMEOUT_INIT_SECONDS
        var total = 0
        var retries: Int32 = 0
        // With `retries` retransmissions the kernel gives up after retries + 1 timeouts.
        while true {
            total += rto
            if total >= seconds && retries >= 1 { return retries }
            if retries >= LinuxConstants.MAX_TCP_SYNCNT { return LinuxConstants.MAX_TCP_SYNCNT }
            retries += 1
            if retries > kernel.synLinearTimeouts { rto = min(rto * 2, max(1, kernel.rtoMaxSeconds)) }
        }
    }

    // MARK: IP

    /// The IP-level options of a socket of `family`; `datagram` is true for UDP sockets.
    ///
    /// An IPv6 socket that may carry IPv4 traffic (version `.any`, i.e. dual-stack with
    /// IPv4-mapped addresses) also gets the IPv4 counterparts, which Linux honours on IPv6
    /// sockets for their IPv4 traffic.
    package static func ip(_ s: IPSocketSettings, family: SocketFamily, datagram: Bool) -> [SocketOptionSetting] {
        var out: [SocketOptionSetting] = []
        let v4 = family == .inet || s.version == .any
        let v6 = family == .inet6
        let ip = SocketLevel.ip, ip6 = SocketLevel.ipv6

        if v6 && s.version == .v6 {
            out.append(.init(level: ip6, name: IPV6_V6ONLY, value: 1))
        }
        if s.hopLimit > 0 {
            let hops = Int32(s.hopLimit)
            if v4 {
                out.append(.init(level: ip, name: IP_TTL, value: hops))
                if datagram { out.append(.init(level: ip, name: IP_MULTICAST_TTL, value: hops)) }
            }
            if v6 {
                out.append(.init(level: ip6, name: IPV6_UNICAST_HOPS, value: hops))
                if datagram { out.append(.init(level: ip6, name: IPV6_MULTICAST_HOPS, value: hops)) }
            }
        }
        if s.disableFragmentation {
            if v4 { out.append(.init(level: ip, name: IP_MTU_DISCOVER, value: IP_PMTUDISC_DO)) }
            if v6 {
                out.append(.init(level: ip6, name: IPV6_MTU_DISCOVER, value: IPV6_PMTUDISC_DO))
                if datagram { out.append(.init(level: ip6, name: IPV6_DONTFRAG, value: 1)) }
            }
        }
        if s.useMinimumMTU && v6 {
            // IPV6_MTU caps the fragment size of datagrams; TCP ignores it, so stream sockets
            // also cap their segment size to what fits in 1280 bytes.
            out.append(.init(level: ip6, name: IPV6_MTU, value: ipv6MinimumMTU))
            if !datagram { out.append(.init(level: SocketLevel.tcp, name: TCP_MAXSEG, value: ipv6MinimumMTUSegmentSize)) }
        }
        if s.shouldCalculateReceiveTime {
            out.append(.init(level: SocketLevel.socket, name: SO_TIMESTAMPNS, value: 1))
        }
        if s.disableMulticastLoopback && datagram {
            if v4 { out.append(.init(level: ip, name: IP_MULTICAST_LOOP, value: 0)) }
            if v6 { out.append(.init(level: ip6, name: IPV6_MULTICAST_LOOP, value: 0)) }
        }
        if v6 {
            switch s.localAddressPreference {
            case .default: break
            case .temporary:
                out.append(.init(level: ip6, name: IPV6_ADDR_PREFERENCES, value: LinuxConstants.IPV6_PREFER_SRC_TMP))
            case .stable:
                out.append(.init(level: ip6, name: IPV6_ADDR_PREFERENCES, value: LinuxConstants.IPV6_PREFER_SRC_PUBLIC))
            }
        }
        return out
    }

    // MARK: UDP

    /// The UDP options. `SO_NO_CHECK` only affects IPv4 (IPv6 requires the checksum, RFC 8200);
    /// on an IPv6 socket it is accepted and has no effect, as on Apple platforms.
    package static func udp(_ s: UDPSocketSettings) -> [SocketOptionSetting] {
        s.preferNoChecksum ? [.init(level: SocketLevel.socket, name: SO_NO_CHECK, value: 1)] : []
    }

    // MARK: Traffic class

    /// The DSCP code point (6 bits) a traffic class is marked with; nil for best effort (DSCP 0,
    /// the default, nothing to set).
    package static func dscp(_ c: TrafficClass) -> UInt8? {
        switch c {
        case .bestEffort: return nil
        case .background: return 8         // CS1 (RFC 3662 lower effort; RFC 8622 LE is 1, less deployed)
        case .responsiveData: return 18    // AF21, low-latency data (RFC 4594)
        case .interactiveVideo: return 34  // AF41, multimedia conferencing (RFC 4594)
        case .interactiveVoice: return 46  // EF, telephony (RFC 3246)
        case .signaling: return 24         // CS3, signaling (RFC 4594)
        }
    }

    /// The `SO_PRIORITY` (local queueing band, `TC_PRIO_*`) of a traffic class; nil for best effort.
    package static func priority(_ c: TrafficClass) -> Int32? {
        switch c {
        case .bestEffort: return nil
        case .background: return LinuxConstants.TC_PRIO_BULK
        case .responsiveData: return LinuxConstants.TC_PRIO_INTERACTIVE_BULK
        case .interactiveVideo, .interactiveVoice, .signaling: return LinuxConstants.TC_PRIO_INTERACTIVE
        }
    }

    /// `IP_TOS` / `IPV6_TCLASS` with the class's DSCP (ECN bits zero), then `SO_PRIORITY`.
    /// IPv6 sockets also set `IP_TOS` for their IPv4-mapped traffic.
    package static func trafficClass(_ c: TrafficClass, family: SocketFamily) -> [SocketOptionSetting] {
        guard let dscp = dscp(c) else { return [] }
        let tos = Int32(dscp) << 2
        var out: [SocketOptionSetting] = [.init(level: SocketLevel.ip, name: IP_TOS, value: tos)]
        if family == .inet6 { out.append(.init(level: SocketLevel.ipv6, name: IPV6_TCLASS, value: tos)) }
        // SO_PRIORITY last: on some kernels IP_TOS resets the priority from the TOS bits.
        if let p = priority(c) { out.append(.init(level: SocketLevel.socket, name: SO_PRIORITY, value: p)) }
        return out
    }

    // MARK: Whole sockets

    /// Everything a TCP socket needs, in the order to apply it: IP, then TCP, then traffic class.
    /// Duplicates keep the last value, except `TCP_MAXSEG`, where the smaller wins (so
    /// `useMinimumMTU` and an explicit `maximumSegmentSize` combine).
    package static func stream(
        tcp t: TCPSocketSettings, ip i: IPSocketSettings, family: SocketFamily,
        trafficClass c: TrafficClass = .bestEffort, listener: Bool = false,
        kernel: KernelTCPTimers = .current
    ) -> [SocketOptionSetting] {
        let tcpPart = listener ? tcpListener(t) : tcp(t, kernel: kernel)
        return merged(ip(i, family: family, datagram: false) + tcpPart + trafficClass(c, family: family))
    }

    /// Everything a UDP socket needs, in the order to apply it: IP, then UDP, then traffic class.
    package static func datagram(
        udp u: UDPSocketSettings, ip i: IPSocketSettings, family: SocketFamily,
        trafficClass c: TrafficClass = .bestEffort
    ) -> [SocketOptionSetting] {
        merged(ip(i, family: family, datagram: true) + udp(u) + trafficClass(c, family: family))
    }

    /// Removes duplicate (level, name) pairs: the last one stays, at its own position;
    /// for `TCP_MAXSEG` the smallest value stays.
    package static func merged(_ settings: [SocketOptionSetting]) -> [SocketOptionSetting] {
        var out: [SocketOptionSetting] = []
        for s in settings {
            if let at = out.firstIndex(where: { $0.level == s.level && $0.name == s.name }) {
                let old = out.remove(at: at)
                if s.level == SocketLevel.tcp && s.name == TCP_MAXSEG {
                    out.append(.init(level: s.level, name: s.name, value: min(old.value, s.value)))
                    continue
                }
            }
            out.append(s)
        }
        return out
    }

    // MARK: Helpers

    private static func clamp(_ v: Int, _ lo: Int32, _ hi: Int32) -> Int32 {
        Int32(Swift.max(Int(lo), Swift.min(Int(hi), v)))
    }

    private static func milliseconds(_ seconds: Int) -> Int32 {
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow || ms > Int(Int32.max) ? Int32.max : Int32(ms)
    }
}

/// The kernel's SYN retransmission schedule, which `TCP_SYNCNT` is counted in.
package struct KernelTCPTimers: Sendable, Equatable {
    /// `net.ipv4.tcp_syn_linear_timeouts` (Linux 6.17+; 0 where the sysctl does not exist).
    package var synLinearTimeouts: Int
    /// `net.ipv4.tcp_rto_max_ms` in whole seconds (120 where the sysctl does not exist).
    package var rtoMaxSeconds: Int

    package init(synLinearTimeouts: Int = 0, rtoMaxSeconds: Int = LinuxConstants.TCP_RTO_MAX_SECONDS) {
        self.synLinearTimeouts = synLinearTimeouts
        self.rtoMaxSeconds = rtoMaxSeconds
    }

    /// Read once from `/proc/sys/net/ipv4`.
    package static let current: KernelTCPTimers = {
        var t = KernelTCPTimers()
        if let v = SysFS.readInt("/proc/sys/net/ipv4/tcp_syn_linear_timeouts") { t.synLinearTimeouts = max(0, v) }
        if let ms = SysFS.readInt("/proc/sys/net/ipv4/tcp_rto_max_ms") { t.rtoMaxSeconds = max(1, ms / 1000) }
        return t
    }()
}
