#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// avahi-daemon (Linux's usual mDNS stack) running in a test's namespace, with a private
/// D-Bus system bus for it and its tools (`avahi-browse`, `avahi-publish`), as
/// /work/shared/PEERS.md §1 describes: the daemon runs under `unshare -m` with its own
/// /run/avahi-daemon (its pid file), so daemons of several namespaces do not collide, and with
/// a host name of its own (namespaces share the machine's).
public final class AvahiDaemon: Sendable {
    public let namespace: TestNamespace
    /// Where the bus socket, the configurations and the daemon's log live.
    public let directory: URL
    public let hostName: String
    private let peer: PeerProcess

    /// `DBUS_SYSTEM_BUS_ADDRESS` for avahi's tools.
    public var busAddress: String { "unix:path=\(directory.appendingPathComponent("bus.sock").path)" }

    /// The daemon's standard error (what it announced, conflicts, failures).
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("avahi.log"), encoding: .utf8)) ?? ""
    }

    /// Starts dbus-daemon and avahi-daemon in `namespace` and waits until the daemon has
    /// registered its host name; nil (failing under CI) when avahi is not installed.
    public static func start(
        in namespace: TestNamespace, hostName: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> AvahiDaemon? {
        guard let unshare = PeerProcess.executable("unshare", package: "util-linux", sourceLocation: sourceLocation),
            let dbus = PeerProcess.executable("dbus-daemon", package: "dbus-daemon", sourceLocation: sourceLocation),
            let avahi = PeerProcess.executable("avahi-daemon", package: "avahi-daemon", sourceLocation: sourceLocation),
            PeerProcess.executable("avahi-browse", package: "avahi-utils", sourceLocation: sourceLocation) != nil
        else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("avahi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // User avahi must reach the bus socket.
        chmod(directory.path, 0o755)
        let bus = directory.appendingPathComponent("bus.sock").path
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(bus)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/> <allow own="*"/>
                <allow send_destination="*"/> <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(to: directory.appendingPathComponent("dbus.conf"), atomically: true, encoding: .utf8)
        try """
            [server]
            host-name=\(hostName)
            use-ipv4=yes
            use-ipv6=yes
            enable-dbus=yes
            ratelimit-interval-usec=1000000
            ratelimit-burst=1000
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-hinfo=no
            publish-workstation=no
            """.write(to: directory.appendingPathComponent("avahi-daemon.conf"), atomically: true, encoding: .utf8)
        let d = directory.path
        let script = """
            mkdir -p /run/avahi-daemon && mount -t tmpfs -o mode=0755 tmpfs /run/avahi-daemon
            \(dbus) --config-file=\(d)/dbus.conf --nofork --nopidfile 2>\(d)/dbus.log &
            for i in $(seq 50); do [ -S \(bus) ] && break; sleep 0.1; done
            export DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(bus)
            exec \(avahi) -f \(d)/avahi-daemon.conf --no-chroot --no-rlimits --no-proc-title 2>\(d)/avahi.log
            """
        let peer = try namespace.start(unshare, ["-m", "--propagation", "private", "/bin/sh", "-c", script])
        let daemon = AvahiDaemon(namespace: namespace, directory: directory, hostName: hostName, peer: peer)
        let deadline = Date().addingTimeInterval(15)
        while !daemon.log.contains("Server startup complete") {
            guard Date() < deadline else {
                throw BehaviourTimeout(what: "avahi-daemon to start (log: \(daemon.log))", seconds: 15)
            }
            await pause(milliseconds: 50)
        }
        return daemon
    }

    private init(namespace: TestNamespace, directory: URL, hostName: String, peer: PeerProcess) {
        self.namespace = namespace
        self.directory = directory
        self.hostName = hostName
        self.peer = peer
    }

    /// Runs one of avahi's tools (`avahi-browse`, `avahi-publish`, ...) in the namespace,
    /// talking to this daemon, its standard error with its output (`avahi-publish` says
    /// "Established" there); the caller stops it.
    public func tool(_ name: String, _ arguments: [String]) throws -> PeerProcess {
        guard let executable = PeerProcess.executable(name, package: "avahi-utils") else {
            throw TestNamespace.CommandFailed(command: [name], status: -1, output: "\(name) is not installed")
        }
        return try PeerProcess(namespace.ip, ["netns", "exec", namespace.name, "/bin/sh", "-c",
                                              "DBUS_SYSTEM_BUS_ADDRESS=\(busAddress) exec \"$0\" \"$@\" 2>&1", executable] + arguments)
    }

    public func stop() {
        peer.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
