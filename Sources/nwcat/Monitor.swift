import ArgumentParser
import Dispatch
import Foundation
import Network
import NetworkSync

struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the network path (NWPathMonitor) now and on every change.",
        discussion: """
            Starts an NWPathMonitor and prints one line per path on standard output: the status, \
            the interfaces in preference order with their types, which families and DNS are \
            usable, the gateways, and the expensive/constrained flags. The first line comes at \
            once; the next ones when links, addresses or routes change. Runs until interrupted \
            (SIGINT or SIGTERM), or until --count lines were printed.
            """
    )

    @Option(help: "Watch only interfaces of this type: loopback, wifi, cellular, wiredEthernet, other.")
    var interfaceType: String?

    @Option(help: "Leave interfaces of this type out (repeatable).")
    var prohibit: [String] = []

    @Option(help: "Exit after printing this many paths.")
    var count: Int?

    func validate() throws {
        for name in [interfaceType].compactMap({ $0 }) + prohibit where Self.type(named: name) == nil {
            throw ValidationError("'\(name)' is not an interface type (loopback, wifi, cellular, wiredEthernet, other)")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    static func type(named name: String) -> NWInterface.InterfaceType? {
        switch name.lowercased() {
        case "loopback": return .loopback
        case "wifi": return .wifi
        case "cellular": return .cellular
        case "wiredethernet", "wired", "ethernet": return .wiredEthernet
        case "other": return .other
        default: return nil
        }
    }

    /// One line per path: `satisfied interfaces=eth0:wiredEthernet ipv4=yes ipv6=no dns=yes gateways=10.0.0.1 expensive=no constrained=no`.
    static func line(_ path: NWPath) -> String {
        let status: String
        switch path.status {
        case .satisfied: status = "satisfied"
        case .unsatisfied: status = "unsatisfied"
        case .requiresConnection: status = "requiresConnection"
        @unknown default: status = "unknown"
        }
        let interfaces = path.availableInterfaces.map { "\($0.name):\($0.type)" }.joined(separator: ",")
        let gateways = path.gateways.map { endpoint -> String in
            if case .hostPort(let host, _) = endpoint { return "\(host)" }
            return endpoint.debugDescription
        }.joined(separator: ",")
        func yes(_ flag: Bool) -> String { flag ? "yes" : "no" }
        return "\(status) interfaces=\(interfaces.isEmpty ? "-" : interfaces) ipv4=\(yes(path.supportsIPv4)) "
            + "ipv6=\(yes(path.supportsIPv6)) dns=\(yes(path.supportsDNS)) gateways=\(gateways.isEmpty ? "-" : gateways) "
            + "expensive=\(yes(path.isExpensive)) constrained=\(yes(path.isConstrained))"
    }

    func run() throws {
        let monitor: NWPathMonitor
        if let interfaceType, let type = Self.type(named: interfaceType) {
            monitor = NWPathMonitor(requiredInterfaceType: type)
        } else if !prohibit.isEmpty {
            monitor = NWPathMonitor(prohibitedInterfaceTypes: prohibit.compactMap(Self.type(named:)))
        } else {
            monitor = NWPathMonitor()
        }
        let queue = DispatchQueue(label: "nwcat.monitor")
        let latch = ExitLatch()
        let printed = Lock(0)
        let limit = count
        monitor.pathUpdateHandler = { path in
            FileHandle.standardOutput.write(Data((Self.line(path) + "\n").utf8))
            let total = printed.withLock { value -> Int in
                value += 1
                return value
            }
            if let limit, total >= limit { latch.finish(0) }
        }
        let signals = onTerminationSignals(queue: queue) { latch.finish(0) }
        monitor.start(queue: queue)
        let code = latch.wait()
        monitor.cancel()
        withExtendedLifetime(signals) {}
        if code != 0 { throw ExitCode(code) }
    }
}
