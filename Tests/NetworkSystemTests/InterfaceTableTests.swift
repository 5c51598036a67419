#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import NetworkSystem

@Suite("Interfaces")
struct InterfaceTableTests {
    @Test func loopbackIsPresentAndClassified() throws {
        let all = InterfaceTable.current(overrides: [:])
        let lo = try #require(all.first { $0.name == "lo" }, "no lo in \(all)")
        #expect(lo.type == .loopback)
        #expect(lo.index == Int(if_nametoindex("lo")))
        #expect(lo.isUp)
        #expect(!lo.isExpensive && !lo.isConstrained)
        let v4 = lo.addresses.first { $0.family == .inet && $0.bytes == [127, 0, 0, 1] }
        #expect(v4 != nil, "lo addresses: \(lo.addresses)")
        #expect(v4?.prefixLength == 8)
        #expect(v4?.presentation == "127.0.0.1")
        if let v6 = lo.addresses.first(where: { $0.family == .inet6 }) {
            #expect(v6.presentation == "::1")
            #expect(v6.prefixLength == 128)
        }
    }

    @Test func tableIsSortedByIndexAndNamesAreUnique() {
        let all = InterfaceTable.current(overrides: [:])
        #expect(!all.isEmpty)
        #expect(all.map(\.index) == all.map(\.index).sorted())
        #expect(Set(all.map(\.name)).count == all.count)
        for i in all {
            #expect(InterfaceTable.name(index: i.index) == i.name)
        }
    }

    @Test func indexAndNameLookups() {
        #expect(InterfaceTable.index(named: "lo") == Int(if_nametoindex("lo")))
        #expect(InterfaceTable.name(index: Int(if_nametoindex("lo"))) == "lo")
        #expect(InterfaceTable.index(named: "no-such-if0") == nil)
        #expect(InterfaceTable.name(index: 0) == nil)
        #expect(InterfaceTable.name(index: -3) == nil)
        #expect(InterfaceTable.name(index: 999_999) == nil)
    }

    @Test func overrideSyntaxFromTheDocs() {
        let parsed = InterfaceOverride.parse("eth0=cellular,expensive;wlan0=wifi,constrained")
        #expect(parsed.problems.isEmpty)
        #expect(parsed.overrides == [
            "eth0": InterfaceOverride(type: .cellular, isExpensive: true),
            "wlan0": InterfaceOverride(type: .wifi, isConstrained: true),
        ])
    }

    @Test func overrideSyntaxEdgeCases() {
        let text = """
            # comment line
             veth0 = wiredEthernet , noexpensive   # trailing comment
            usb0=expensive;;usb0=WWAN
            bad entry; =wifi; x=banana,constrained
            """
        let parsed = InterfaceOverride.parse(text)
        #expect(parsed.overrides["veth0"] == InterfaceOverride(type: .wiredEthernet, isExpensive: false))
        // A later entry for the same name adds to the earlier one field by field.
        #expect(parsed.overrides["usb0"] == InterfaceOverride(type: .cellular, isExpensive: true))
        #expect(parsed.overrides["x"] == InterfaceOverride(isConstrained: true))
        #expect(parsed.problems.count == 3, "\(parsed.problems)")
        #expect(InterfaceOverride.parse("").overrides.isEmpty)
    }

    @Test func overridesApplyToTheLiveTable() throws {
        let cellular = InterfaceTable.current(overrides: ["lo": InterfaceOverride(type: .cellular)])
        let lo = try #require(cellular.first { $0.name == "lo" })
        #expect(lo.type == .cellular)
        #expect(lo.isExpensive, "cellular is expensive by default")
        #expect(!lo.isConstrained)

        let cheap = InterfaceTable.current(overrides: InterfaceOverride.parse("lo=cellular,noexpensive,constrained").overrides)
        let lo2 = try #require(cheap.first { $0.name == "lo" })
        #expect(lo2.type == .cellular && !lo2.isExpensive && lo2.isConstrained)

        let flagsOnly = InterfaceTable.current(overrides: InterfaceOverride.parse("lo=expensive").overrides)
        let lo3 = try #require(flagsOnly.first { $0.name == "lo" })
        #expect(lo3.type == .loopback && lo3.isExpensive)
    }

    @Test func classificationFromSysfs() throws {
        let root = try TemporaryDirectory()
        try root.make("wl0/wireless", directory: true)
        try root.make("wl1/phy80211", directory: true)
        try root.write("wwan0/uevent", "DEVTYPE=wwan\nINTERFACE=wwan0\nIFINDEX=7\n")
        try root.write("wwan0/type", "65534\n")
        try root.write("en0/uevent", "INTERFACE=en0\nIFINDEX=2\n")
        try root.write("en0/type", "1\n")
        try root.write("tun0/type", "65534\n")
        try root.write("gre0/type", "778\n")

        let up = UInt32(IFF_UP)
        #expect(InterfaceTable.classify(name: "wl0", flags: up, sysfsRoot: root.path) == .wifi)
        #expect(InterfaceTable.classify(name: "wl1", flags: up, sysfsRoot: root.path) == .wifi)
        #expect(InterfaceTable.classify(name: "wwan0", flags: up, sysfsRoot: root.path) == .cellular)
        #expect(InterfaceTable.classify(name: "en0", flags: up, sysfsRoot: root.path) == .wiredEthernet)
        #expect(InterfaceTable.classify(name: "tun0", flags: up, sysfsRoot: root.path) == .other)
        #expect(InterfaceTable.classify(name: "gre0", flags: up, sysfsRoot: root.path) == .other)
        #expect(InterfaceTable.classify(name: "missing", flags: up, sysfsRoot: root.path) == .other)
        #expect(InterfaceTable.classify(name: "en0", flags: up | UInt32(IFF_LOOPBACK), sysfsRoot: root.path) == .loopback)

        let wwan = InterfaceTable.makeInterface(name: "wwan0", index: 7, flags: up | UInt32(IFF_MULTICAST),
                                                addresses: [], override: nil, sysfsRoot: root.path)
        #expect(wwan.type == .cellular && wwan.isExpensive && wwan.isUp && wwan.supportsMulticast && !wwan.isRunning)
        let forced = InterfaceTable.makeInterface(name: "en0", index: 2, flags: up, addresses: [],
                                                  override: InterfaceOverride(type: .wifi, isConstrained: true),
                                                  sysfsRoot: root.path)
        #expect(forced.type == .wifi && forced.isConstrained && !forced.isExpensive)
    }

    /// The real sysfs agrees with the rules for every interface on this machine.
    @Test func liveClassificationMatchesSysfs() {
        for i in InterfaceTable.current(overrides: [:]) where i.type != .loopback {
            let type = SysFS.readInt("/sys/class/net/\(i.name)/type")
            if i.type == .wiredEthernet { #expect(type == 1) }
        }
    }

    @Test func prefixLengths() {
        func p(_ bytes: [UInt8]) -> Int { bytes.withUnsafeBytes { InterfaceTable.prefixLength(of: $0) } }
        #expect(p([255, 0, 0, 0]) == 8)
        #expect(p([255, 255, 255, 0]) == 24)
        #expect(p([255, 255, 255, 255]) == 32)
        #expect(p([255, 255, 240, 0]) == 20)
        #expect(p([0, 0, 0, 0]) == 0)
        #expect(p([UInt8](repeating: 255, count: 8) + [UInt8](repeating: 0, count: 8)) == 64)
    }

    @Test func typeNames() {
        #expect(SystemInterfaceType(overrideName: "WiFi") == .wifi)
        #expect(SystemInterfaceType(overrideName: "wiredethernet") == .wiredEthernet)
        #expect(SystemInterfaceType(overrideName: "ethernet") == .wiredEthernet)
        #expect(SystemInterfaceType(overrideName: "wwan") == .cellular)
        #expect(SystemInterfaceType(overrideName: "nope") == nil)
    }
}

/// A mkdtemp directory removed on deinit.
final class TemporaryDirectory {
    let path: String
    private var created: [String] = []

    init() throws {
        var template = Array("/tmp/nwsys-test-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw SystemError.last("mkdtemp") }
        path = String(cString: p)
    }

    deinit {
        for p in created.reversed() { remove(p) }
        rmdir(path)
    }

    func make(_ relative: String, directory: Bool) throws {
        var current = path
        let parts = relative.split(separator: "/")
        for (n, part) in parts.enumerated() {
            current += "/" + part
            if n < parts.count - 1 || directory {
                if mkdir(current, 0o755) == 0 { created.append(current) } else if errno != EEXIST {
                    throw SystemError.last("mkdir \(current)")
                }
            }
        }
    }

    func write(_ relative: String, _ content: String) throws {
        try make(relative, directory: false)
        guard let f = fopen(path + "/" + relative, "w") else { throw SystemError.last("fopen") }
        created.append(path + "/" + relative)
        defer { fclose(f) }
        fputs(content, f)
    }
}
