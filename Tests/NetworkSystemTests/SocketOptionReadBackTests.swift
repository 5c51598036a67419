#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import NetworkSystem

/// One knob set on a real socket, and what getsockopt must answer afterwards.
struct KnobCase: Sendable, CustomTestStringConvertible {
    enum Kind: Sendable { case tcpClient, tcpListener, udp }
    struct Expect: Sendable {
        var level: Int32, name: Int32, value: Int32
        /// Only these bits are compared (IPV6_ADDR_PREFERENCES also reports HOME/COA bits).
        var mask: Int32 = -1
        /// False for a system default the test checks was left alone.
        var inPlan = true
    }

    var label: String
    var family: SocketFamily
    var kind: Kind
    var tcp = TCPSocketSettings()
    var ip = IPSocketSettings()
    var udp = UDPSocketSettings()
    var trafficClass = TrafficClass.bestEffort
    var expected: [Expect]

    var testDescription: String { "\(label) [\(family), \(kind)]" }

    var plan: [SocketOptionSetting] {
        switch kind {
        case .tcpClient: SocketOptionPlan.stream(tcp: tcp, ip: ip, family: family, trafficClass: trafficClass)
        case .tcpListener: SocketOptionPlan.stream(tcp: tcp, ip: ip, family: family, trafficClass: trafficClass, listener: true)
        case .udp: SocketOptionPlan.datagram(udp: udp, ip: ip, family: family, trafficClass: trafficClass)
        }
    }
}

private let tcpL = SocketLevel.tcp, ipL = SocketLevel.ip, ip6L = SocketLevel.ipv6, solL = SocketLevel.socket
private typealias E = KnobCase.Expect

private func tcpCase(_ label: String, family f: SocketFamily = .inet, listener: Bool = false,
                     _ set: (inout TCPSocketSettings) -> Void, _ expected: [E]) -> KnobCase {
    var s = TCPSocketSettings()
    set(&s)
    return KnobCase(label: label, family: f, kind: listener ? .tcpListener : .tcpClient, tcp: s, expected: expected)
}

private func ipCase(_ label: String, _ f: SocketFamily, datagram: Bool,
                    _ set: (inout IPSocketSettings) -> Void, _ expected: [E]) -> KnobCase {
    var s = IPSocketSettings()
    set(&s)
    return KnobCase(label: label, family: f, kind: datagram ? .udp : .tcpClient, ip: s, expected: expected)
}

let tcpKnobCases: [KnobCase] = [
    tcpCase("noDelay", { $0.noDelay = true }, [E(level: tcpL, name: TCP_NODELAY, value: 1)]),
    tcpCase("noPush", { $0.noPush = true }, [E(level: tcpL, name: TCP_CORK, value: 1)]),
    tcpCase("enableKeepalive", { $0.enableKeepalive = true }, [E(level: solL, name: SO_KEEPALIVE, value: 1)]),
    tcpCase("keepaliveCount", { $0.keepaliveCount = 5 }, [E(level: tcpL, name: TCP_KEEPCNT, value: 5)]),
    tcpCase("keepaliveCount clamped", { $0.keepaliveCount = 1000 }, [E(level: tcpL, name: TCP_KEEPCNT, value: 127)]),
    tcpCase("keepaliveIdle", { $0.keepaliveIdle = 30 }, [E(level: tcpL, name: TCP_KEEPIDLE, value: 30)]),
    tcpCase("keepaliveIdle clamped", { $0.keepaliveIdle = 100_000 }, [E(level: tcpL, name: TCP_KEEPIDLE, value: 32767)]),
    tcpCase("keepaliveInterval", { $0.keepaliveInterval = 7 }, [E(level: tcpL, name: TCP_KEEPINTVL, value: 7)]),
    tcpCase("all keepalive knobs", { $0.enableKeepalive = true; $0.keepaliveCount = 3; $0.keepaliveIdle = 60; $0.keepaliveInterval = 5 }, [
        E(level: solL, name: SO_KEEPALIVE, value: 1), E(level: tcpL, name: TCP_KEEPCNT, value: 3),
        E(level: tcpL, name: TCP_KEEPIDLE, value: 60), E(level: tcpL, name: TCP_KEEPINTVL, value: 5),
    ]),
    // Before connect(2) the kernel reports the user's MSS as set.
    tcpCase("maximumSegmentSize", { $0.maximumSegmentSize = 1000 }, [E(level: tcpL, name: TCP_MAXSEG, value: 1000)]),
    tcpCase("maximumSegmentSize clamped low", { $0.maximumSegmentSize = 40 }, [E(level: tcpL, name: TCP_MAXSEG, value: 88)]),
    tcpCase("maximumSegmentSize clamped high", { $0.maximumSegmentSize = 70_000 }, [E(level: tcpL, name: TCP_MAXSEG, value: 32767)]),
    tcpCase("connectionTimeout", { $0.connectionTimeout = 10 },
            [E(level: tcpL, name: TCP_SYNCNT, value: SocketOptionPlan.synRetries(forTimeout: 10))]),
    tcpCase("connectionTimeout long", { $0.connectionTimeout = 600 },
            [E(level: tcpL, name: TCP_SYNCNT, value: SocketOptionPlan.synRetries(forTimeout: 600))]),
    tcpCase("connectionDropTime", { $0.connectionDropTime = 30 }, [E(level: tcpL, name: TCP_USER_TIMEOUT, value: 30_000)]),
    tcpCase("persistTimeout alone", { $0.persistTimeout = 20 }, [E(level: tcpL, name: TCP_USER_TIMEOUT, value: 20_000)]),
    tcpCase("connectionDropTime wins over persistTimeout", { $0.persistTimeout = 20; $0.connectionDropTime = 45 },
            [E(level: tcpL, name: TCP_USER_TIMEOUT, value: 45_000)]),
    tcpCase("disableAckStretching", { $0.disableAckStretching = true }, [E(level: tcpL, name: TCP_QUICKACK, value: 1)]),
    tcpCase("noDelay IPv6", family: .inet6, { $0.noDelay = true; $0.connectionDropTime = 5 },
            [E(level: tcpL, name: TCP_NODELAY, value: 1), E(level: tcpL, name: TCP_USER_TIMEOUT, value: 5000)]),
    tcpCase("enableFastOpen listener", listener: true, { $0.enableFastOpen = true },
            [E(level: tcpL, name: TCP_FASTOPEN, value: SocketOptionPlan.fastOpenQueueLength)]),
    tcpCase("listener inherits knobs", family: .inet6, listener: true, { $0.noDelay = true; $0.enableKeepalive = true; $0.keepaliveIdle = 9 }, [
        E(level: tcpL, name: TCP_NODELAY, value: 1), E(level: solL, name: SO_KEEPALIVE, value: 1),
        E(level: tcpL, name: TCP_KEEPIDLE, value: 9),
    ]),
]

let ipKnobCases: [KnobCase] = [
    ipCase("hopLimit", .inet, datagram: false, { $0.hopLimit = 42 }, [E(level: ipL, name: IP_TTL, value: 42)]),
    ipCase("hopLimit", .inet, datagram: true, { $0.hopLimit = 42 },
           [E(level: ipL, name: IP_TTL, value: 42), E(level: ipL, name: IP_MULTICAST_TTL, value: 42)]),
    ipCase("hopLimit", .inet6, datagram: false, { $0.hopLimit = 42 },
           [E(level: ip6L, name: IPV6_UNICAST_HOPS, value: 42), E(level: ipL, name: IP_TTL, value: 42)]),
    ipCase("hopLimit", .inet6, datagram: true, { $0.hopLimit = 42 }, [
        E(level: ip6L, name: IPV6_UNICAST_HOPS, value: 42), E(level: ip6L, name: IPV6_MULTICAST_HOPS, value: 42),
        E(level: ipL, name: IP_TTL, value: 42), E(level: ipL, name: IP_MULTICAST_TTL, value: 42),
    ]),
    ipCase("disableFragmentation", .inet, datagram: false, { $0.disableFragmentation = true },
           [E(level: ipL, name: IP_MTU_DISCOVER, value: IP_PMTUDISC_DO)]),
    ipCase("disableFragmentation", .inet, datagram: true, { $0.disableFragmentation = true },
           [E(level: ipL, name: IP_MTU_DISCOVER, value: IP_PMTUDISC_DO)]),
    ipCase("disableFragmentation", .inet6, datagram: false, { $0.disableFragmentation = true },
           [E(level: ip6L, name: IPV6_MTU_DISCOVER, value: IPV6_PMTUDISC_DO), E(level: ipL, name: IP_MTU_DISCOVER, value: IP_PMTUDISC_DO)]),
    ipCase("disableFragmentation", .inet6, datagram: true, { $0.disableFragmentation = true },
           [E(level: ip6L, name: IPV6_MTU_DISCOVER, value: IPV6_PMTUDISC_DO), E(level: ip6L, name: IPV6_DONTFRAG, value: 1)]),
    // IPV6_MTU itself cannot be read back (getsockopt reports the route's MTU); see the
    // behavioural test below. On stream sockets the MSS is capped.
    ipCase("useMinimumMTU", .inet6, datagram: false, { $0.useMinimumMTU = true },
           [E(level: tcpL, name: TCP_MAXSEG, value: SocketOptionPlan.ipv6MinimumMTUSegmentSize)]),
    ipCase("shouldCalculateReceiveTime", .inet, datagram: true, { $0.shouldCalculateReceiveTime = true },
           [E(level: solL, name: SO_TIMESTAMPNS, value: 1)]),
    ipCase("shouldCalculateReceiveTime", .inet6, datagram: false, { $0.shouldCalculateReceiveTime = true },
           [E(level: solL, name: SO_TIMESTAMPNS, value: 1)]),
    ipCase("disableMulticastLoopback", .inet, datagram: true, { $0.disableMulticastLoopback = true },
           [E(level: ipL, name: IP_MULTICAST_LOOP, value: 0)]),
    ipCase("disableMulticastLoopback", .inet6, datagram: true, { $0.disableMulticastLoopback = true },
           [E(level: ip6L, name: IPV6_MULTICAST_LOOP, value: 0), E(level: ipL, name: IP_MULTICAST_LOOP, value: 0)]),
    ipCase("localAddressPreference temporary", .inet6, datagram: false, { $0.localAddressPreference = .temporary },
           [E(level: ip6L, name: IPV6_ADDR_PREFERENCES, value: LinuxConstants.IPV6_PREFER_SRC_TMP, mask: LinuxConstants.IPV6_PREFER_SRC_MASK)]),
    ipCase("localAddressPreference stable", .inet6, datagram: true, { $0.localAddressPreference = .stable },
           [E(level: ip6L, name: IPV6_ADDR_PREFERENCES, value: LinuxConstants.IPV6_PREFER_SRC_PUBLIC, mask: LinuxConstants.IPV6_PREFER_SRC_MASK)]),
    ipCase("version v6", .inet6, datagram: false, { $0.version = .v6 }, [E(level: ip6L, name: IPV6_V6ONLY, value: 1)]),
    ipCase("version v6 skips IPv4 counterparts", .inet6, datagram: true, { $0.version = .v6; $0.hopLimit = 9 }, [
        E(level: ip6L, name: IPV6_V6ONLY, value: 1), E(level: ip6L, name: IPV6_UNICAST_HOPS, value: 9),
        E(level: ipL, name: IP_TTL, value: Int32(sysctl("net/ipv4/ip_default_ttl") ?? 64), inPlan: false),  // untouched
    ]),
]

let udpAndClassCases: [KnobCase] = {
    var cases: [KnobCase] = []
    for f in [SocketFamily.inet, .inet6] {
        var u = UDPSocketSettings()
        u.preferNoChecksum = true
        cases.append(KnobCase(label: "preferNoChecksum", family: f, kind: .udp, udp: u,
                              expected: [E(level: solL, name: SO_NO_CHECK, value: 1)]))
    }
    let classes: [TrafficClass] = [.background, .responsiveData, .interactiveVideo, .interactiveVoice, .signaling]
    for c in classes {
        let tos = Int32(SocketOptionPlan.dscp(c)!) << 2
        let prio = SocketOptionPlan.priority(c)!
        for f in [SocketFamily.inet, .inet6] {
            for kind in [KnobCase.Kind.tcpClient, .udp] {
                var expected = [E(level: ipL, name: IP_TOS, value: tos), E(level: solL, name: SO_PRIORITY, value: prio)]
                if f == .inet6 { expected.append(E(level: ip6L, name: IPV6_TCLASS, value: tos)) }
                cases.append(KnobCase(label: "trafficClass \(c)", family: f, kind: kind, trafficClass: c, expected: expected))
            }
        }
    }
    return cases
}()

@Suite("Socket options read back from real sockets")
struct SocketOptionReadBackTests {
    @Test(arguments: tcpKnobCases + ipKnobCases + udpAndClassCases)
    func knobReadsBack(_ c: KnobCase) throws {
        let sock = try TestSocket(c.family, datagram: c.kind == .udp)
        let plan = c.plan
        for e in c.expected where e.inPlan {
            #expect(plan.contains { $0.level == e.level && $0.name == e.name && $0.value & e.mask == e.value },
                    "plan \(plan) lacks \(e)")
        }
        for e in c.expected where !e.inPlan {
            #expect(!plan.contains { $0.level == e.level && $0.name == e.name }, "plan \(plan) sets \(e)")
        }
        try SocketOptions.apply(plan, fd: sock.fd)
        if c.kind == .tcpListener {
            _ = try sock.bindLoopback()
            #expect(listen(sock.fd, 8) == 0)
        }
        for e in c.expected {
            let got = try sock.get(e.level, e.name)
            #expect(got & e.mask == e.value, "level \(e.level) option \(e.name): got \(got), want \(e.value)")
        }
    }

    /// Every setting a full plan emits is accepted by the kernel and reads back as set, for
    /// every socket shape (except those the kernel reports differently, listed).
    @Test(arguments: [SocketFamily.inet, .inet6], [false, true])
    func everyEmittedSettingReadsBack(family: SocketFamily, datagram: Bool) throws {
        var t = TCPSocketSettings()
        t.noDelay = true; t.noPush = true; t.enableKeepalive = true
        t.keepaliveCount = 4; t.keepaliveIdle = 20; t.keepaliveInterval = 3
        t.maximumSegmentSize = 1300; t.connectionTimeout = 30; t.connectionDropTime = 60
        t.disableAckStretching = true
        var i = IPSocketSettings()
        i.hopLimit = 33; i.disableFragmentation = true; i.shouldCalculateReceiveTime = true
        i.disableMulticastLoopback = true
        if family == .inet6 { i.useMinimumMTU = true; i.localAddressPreference = .temporary }
        var u = UDPSocketSettings()
        u.preferNoChecksum = true

        let plan = datagram
            ? SocketOptionPlan.datagram(udp: u, ip: i, family: family, trafficClass: .interactiveVoice)
            : SocketOptionPlan.stream(tcp: t, ip: i, family: family, trafficClass: .interactiveVoice)
        let sock = try TestSocket(family, datagram: datagram)
        try SocketOptions.apply(plan, fd: sock.fd)
        for s in plan {
            if s.level == ip6L && s.name == IPV6_MTU { continue }  // getsockopt reports the route MTU
            var got = try sock.get(s.level, s.name)
            if s.level == ip6L && s.name == IPV6_ADDR_PREFERENCES { got &= LinuxConstants.IPV6_PREFER_SRC_MASK }
            #expect(got == s.value, "\(s) read back \(got)")
        }
        if !datagram && family == .inet6 {
            // useMinimumMTU (1220) and maximumSegmentSize (1300) combine: the smaller wins.
            #expect(try sock.get(tcpL, TCP_MAXSEG) == 1220)
        }
    }

    @Test func fastOpenConnectFollowsTheSysctl() throws {
        var t = TCPSocketSettings()
        t.enableFastOpen = true
        let plan = SocketOptionPlan.tcp(t)
        #expect(plan.contains(SocketOptionSetting(level: tcpL, name: TCP_FASTOPEN_CONNECT, value: 1)))
        let sock = try TestSocket(.inet, datagram: false)
        let clientEnabled = (sysctl("net/ipv4/tcp_fastopen") ?? 1) & 1 != 0
        if clientEnabled {
            try SocketOptions.apply(plan, fd: sock.fd)
            #expect(try sock.get(tcpL, TCP_FASTOPEN_CONNECT) == 1)
        } else {
            // The kernel refuses it; the engine applies TFO best-effort.
            let failures = SocketOptions.applyBestEffort(plan, fd: sock.fd)
            #expect(failures.map(\.1.errno) == [EOPNOTSUPP])
        }
    }

    /// The MSS still holds after a real handshake over loopback (the kernel subtracts the
    /// 12-byte timestamp option from what it reports once connected).
    @Test(arguments: [SocketFamily.inet, .inet6])
    func maximumSegmentSizeAfterConnect(family: SocketFamily) throws {
        let listener = try TestSocket(family, datagram: false)
        let port = try listener.bindLoopback()
        #expect(listen(listener.fd, 4) == 0)
        var t = TCPSocketSettings()
        t.maximumSegmentSize = 1000
        let client = try TestSocket(family, datagram: false)
        try SocketOptions.apply(SocketOptionPlan.tcp(t), fd: client.fd)
        try client.connectLoopback(port: port)
        let mss = try client.get(tcpL, TCP_MAXSEG)
        #expect(mss <= 1000 && mss >= 900, "connected MSS \(mss)")
    }

    /// useMinimumMTU on a UDP/IPv6 socket: with fragmentation disabled, a datagram that fits
    /// loopback's 64 KiB MTU but not 1280 bytes is refused with EMSGSIZE.
    @Test func useMinimumMTUCapsDatagramSize() throws {
        func sendSize(_ size: Int, minimumMTU: Bool) throws -> Int32 {
            let receiver = try TestSocket(.inet6, datagram: true)
            let port = try receiver.bindLoopback()
            var i = IPSocketSettings()
            i.disableFragmentation = true
            i.useMinimumMTU = minimumMTU
            let sender = try TestSocket(.inet6, datagram: true)
            try SocketOptions.apply(SocketOptionPlan.ip(i, family: .inet6, datagram: true), fd: sender.fd)
            try sender.connectLoopback(port: port)
            let payload = [UInt8](repeating: 7, count: size)
            let n = payload.withUnsafeBytes { send(sender.fd, $0.baseAddress, $0.count, 0) }
            return n < 0 ? -errno : 0
        }
        #expect(try sendSize(1200, minimumMTU: true) == 0)
        #expect(try sendSize(1300, minimumMTU: true) == -EMSGSIZE)
        #expect(try sendSize(1300, minimumMTU: false) == 0)
    }

    @Test func rawGetAndSetThrowSystemError() throws {
        let sock = try TestSocket(.inet, datagram: false)
        try SocketOptions.set(fd: sock.fd, level: tcpL, name: TCP_NODELAY, value: 1)
        #expect(try SocketOptions.get(fd: sock.fd, level: tcpL, name: TCP_NODELAY) == 1)
        #expect(throws: SystemError.self) {
            try SocketOptions.set(fd: sock.fd, level: tcpL, name: TCP_MAXSEG, value: 1)
        }
        do {
            _ = try SocketOptions.get(fd: -1, level: solL, name: SO_TYPE)
            Issue.record("expected EBADF")
        } catch {
            #expect(error.errno == EBADF)
        }
        let failures = SocketOptions.applyBestEffort([
            SocketOptionSetting(level: tcpL, name: TCP_MAXSEG, value: 1),
            SocketOptionSetting(level: tcpL, name: TCP_NODELAY, value: 0),
        ], fd: sock.fd)
        #expect(failures.count == 1 && failures.first?.1.errno == EINVAL)
        #expect(try sock.get(tcpL, TCP_NODELAY) == 0)
    }
}

@Suite("NetworkSystem.TCPInfoLayout")
struct TCPInfoLayoutTests {
    @Test func layoutMatchesTheKernelStruct() {
        // Offsets from linux/tcp.h: tcpi_total_retrans at 100, tcpi_bytes_acked at 120,
        // tcpi_notsent_bytes at 144, tcpi_bytes_sent at 200, tcpi_snd_wnd at 228; size 232.
        #expect(MemoryLayout<LinuxTCPInfo>.offset(of: \.totalRetrans) == 100)
        #expect(MemoryLayout<LinuxTCPInfo>.offset(of: \.bytesAcked) == 120)
        #expect(MemoryLayout<LinuxTCPInfo>.offset(of: \.notsentBytes) == 144)
        #expect(MemoryLayout<LinuxTCPInfo>.offset(of: \.bytesSent) == 200)
        #expect(MemoryLayout<LinuxTCPInfo>.offset(of: \.sndWnd) == 228)
        #expect(MemoryLayout<LinuxTCPInfo>.size == 232)
    }
}
