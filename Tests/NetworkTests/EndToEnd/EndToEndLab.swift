#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PeerSupport
import Testing

/// Two network namespaces joined by a veth pair: a client side where `nwcat` and `curl` run,
/// and a server side with a real DNS server (dnsmasq), a real HTTP server (Python's
/// http.server, both families on one socket) and, when a test asks, real proxies (dante,
/// tinyproxy). Both sides use the dnsmasq through their own resolv.conf (`search test`), so
/// nwcat's resolver, curl's getaddrinfo and the proxies' lookups all ask the same server.
///
/// The IPv6 addresses are global ones (2001:db8::/32), not ULAs: under RFC 6724's default
/// policy table a ULA ranks below every IPv4 address, so which family a client following the
/// RFC tries first would depend on which DNS answer arrived first (an early AAAA answer starts
/// the race before the A answer can be ranked above it). A global address ranks above IPv4
/// whatever the order, for us and for glibc (curl) alike.
final class EndToEndLab: Sendable {
    static let clientIPv4 = "10.78.0.1"
    static let serverIPv4 = "10.78.0.2"
    static let serverIPv6 = "2001:db8:78::2"
    static let httpPort = 8080
    static let socksPort = 1080
    static let socksAuthPort = 1081
    static let httpProxyPort = 8888

    let client: TestNamespace
    let server: TestNamespace
    let directory: URL
    let ip: String
    let nwcat: String
    let curl: String

    /// dnsmasq's query log: one `query[AAAA] dual.test from 10.78.0.1` line per question.
    var dnsLog: String { (try? String(contentsOf: directory.appendingPathComponent("dnsmasq.log"), encoding: .utf8)) ?? "" }

    /// The whole lab, or nil (after saying why, failing under CI) when a tool, a peer or root
    /// is missing.
    static func make(sourceLocation: SourceLocation = #_sourceLocation) async throws -> EndToEndLab? {
        guard let nwcat = builtNWCat(sourceLocation: sourceLocation),
            let curl = PeerProcess.executable("curl", sourceLocation: sourceLocation),
            let dnsmasq = PeerProcess.executable("dnsmasq", package: "dnsmasq-base", sourceLocation: sourceLocation),
            let python = PeerProcess.executable("python3", sourceLocation: sourceLocation),
            PeerProcess.executable("nft", package: "nftables", sourceLocation: sourceLocation) != nil,
            let client = TestNamespace.make(sourceLocation: sourceLocation)
        else { return nil }
        guard let server = TestNamespace.make(sourceLocation: sourceLocation) else {
            client.tearDown()
            return nil
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString)")
        let lab = EndToEndLab(client: client, server: server, directory: directory, nwcat: nwcat, curl: curl)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // dante drops to `nobody` for some work; it must still reach its files.
            chmod(directory.path, 0o755)
            try await lab.build(dnsmasq: dnsmasq, python: python)
            return lab
        } catch {
            lab.tearDown()
            throw error
        }
    }

    private init(client: TestNamespace, server: TestNamespace, directory: URL, nwcat: String, curl: String) {
        self.client = client
        self.server = server
        self.directory = directory
        self.ip = client.ip
        self.nwcat = nwcat
        self.curl = curl
    }

    private func build(dnsmasq: String, python: String) async throws {
        // The setup runs many short tools and waits for each: off the cooperative pool, which
        // the tests running in parallel need.
        try await offload { [self] in try configure(dnsmasq: dnsmasq, python: python) }
        try await server.waitUntilBound(port: 53, udp: true)
        try await server.waitUntilBound(port: UInt16(Self.httpPort))
    }

    /// Links, addresses, /etc/netns files and the server's peers.
    private func configure(dnsmasq: String, python: String) throws {
        try client.link(
            addresses: ["\(Self.clientIPv4)/24", "2001:db8:78::1/64"], to: server,
            otherAddresses: ["\(Self.serverIPv4)/24", "\(Self.serverIPv6)/64"])
        for side in [client, server] {
            // `timeout:2 attempts:1`: a lost query costs two seconds, not the default 5 × 2.
            try side.writeEtc("resolv.conf", "nameserver \(Self.serverIPv4)\nsearch test\noptions timeout:2 attempts:1\n")
            // Only what the tests define: the machine's own names must not answer for *.test.
            try side.writeEtc("hosts", "127.0.0.1 localhost\n")
            // files then dns: our resolver answers A and AAAA itself (not through getaddrinfo).
            try side.writeEtc("nsswitch.conf", "hosts: files dns\n")
        }
        let records = [
            "--host-record=dual.test,\(Self.serverIPv4),\(Self.serverIPv6),30",
            "--host-record=direct.test,\(Self.serverIPv4),\(Self.serverIPv6),30",
        ]
        _ = try server.start(dnsmasq, [
            "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--user=root", "--pid-file=",
            "--listen-address=\(Self.serverIPv4)", "--bind-interfaces", "--local=/test/", "--no-negcache",
            "--log-queries", "--log-facility=\(directory.appendingPathComponent("dnsmasq.log").path)",
        ] + records)
        // A real HTTP server (Python's), one dual-stack socket, quiet (no request log on the
        // test's output). A connection that sends nothing and closes just ends.
        let httpServer = """
            import http.server, socket, sys
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = b"hello from the server namespace\\n"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            class Server(http.server.ThreadingHTTPServer):
                address_family = socket.AF_INET6
                def server_bind(self):
                    self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                    super().server_bind()
            Server(("::", int(sys.argv[1])), Handler).serve_forever()
            """
        _ = try server.start(python, ["-c", httpServer, "\(Self.httpPort)"])
    }

    /// Removes both namespaces, their peers and the lab's files.
    func tearDown() {
        client.tearDown()
        server.tearDown()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Blackholes

    /// What the server namespace's firewall silently drops (no RST, no ICMP) on the HTTP port.
    enum Blackhole {
        case ipv6, everything
    }

    /// Drops packets to the HTTP port in the server namespace.
    func blackhole(_ what: Blackhole) async throws {
        let match = what == .ipv6 ? "meta nfproto ipv6 tcp dport \(Self.httpPort)" : "tcp dport \(Self.httpPort)"
        let server = self.server
        try await offload {
            try server.applyRuleset("""
                table inet e2e {
                  chain input {
                    type filter hook input priority 0; policy accept;
                    \(match) drop
                  }
                }
                """)
        }
    }

    // MARK: Proxies in the server namespace

    /// dante on the server's IPv4 address, without authentication (`socksPort`) or with the
    /// system's user/password check (`socksAuthPort`). It resolves names with the lab's dnsmasq.
    func startDante(usernameAuthentication: Bool) async throws {
        guard let danted = PeerProcess.executable("danted", package: "dante-server") else {
            throw LabError("danted is not installed")
        }
        let port = usernameAuthentication ? Self.socksAuthPort : Self.socksPort
        let configuration = Dante.configuration(
            logFile: "\(directory.path)/danted-\(port).log", address: Self.serverIPv4, port: port,
            external: "\(server.name)b", usernameAuthentication: usernameAuthentication, logConnections: true)
        let path = directory.appendingPathComponent("danted-\(port).conf").path
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        let pidFile = directory.appendingPathComponent("danted-\(port).pid").path
        let server = self.server
        _ = try await offload { try server.start(danted, ["-f", path, "-p", pidFile]) }
        try await server.waitUntilBound(port: UInt16(port))
    }

    /// tinyproxy (HTTP CONNECT to any port) on the server's IPv4 address with `BasicAuth`.
    func startTinyproxy(user: String, password: String) async throws {
        guard let tinyproxy = PeerProcess.executable("tinyproxy") else { throw LabError("tinyproxy is not installed") }
        let configuration = """
            Port \(Self.httpProxyPort)
            Listen \(Self.serverIPv4)
            Timeout 30
            LogLevel Connect
            LogFile "\(directory.path)/tinyproxy.log"
            Allow 10.78.0.0/24
            DisableViaHeader Yes
            BasicAuth \(user) \(password)

            """
        let path = directory.appendingPathComponent("tinyproxy.conf").path
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        let server = self.server
        _ = try await offload { try server.start(tinyproxy, ["-d", "-c", path]) }
        try await server.waitUntilBound(port: UInt16(Self.httpProxyPort))
    }

    // MARK: Clients in the client namespace

    /// Proxy variables from the test's environment must not reach the clients: both nwcat and
    /// curl honour them, and the lab decides every proxy itself.
    private var cleanEnvironment: [String] {
        ["/usr/bin/env"] + ["all_proxy", "ALL_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"]
            .flatMap { ["-u", $0] }
    }

    /// One `nwcat connect -v` run in the client namespace, with nothing on standard input.
    struct NWCatRun {
        let status: Int32?
        let standardError: String
        /// Wall time of the whole process, start-up included.
        let elapsed: Double
        /// The `nwcat: timing key=value …` line, or empty when nwcat printed none.
        let timing: [String: String]

        /// The establishment's own start-to-ready time, in seconds.
        var duration: Double? { timing["duration"].flatMap(Double.init) }
    }

    /// Runs `nwcat connect -v ARGUMENTS` in the client namespace.
    func nwcat(_ arguments: [String], timeout: Double = 20) async throws -> NWCatRun {
        let started = Date()
        let result = try await ToolProcess.run(
            ip, ["netns", "exec", client.name] + cleanEnvironment + [nwcat, "connect", "-v"] + arguments, timeout: timeout)
        let elapsed = Date().timeIntervalSince(started)
        var timing: [String: String] = [:]
        if let line = result.error.split(separator: "\n").first(where: { $0.hasPrefix("nwcat: timing ") }) {
            for field in line.dropFirst("nwcat: timing ".count).split(separator: " ") {
                guard let equals = field.firstIndex(of: "=") else { continue }
                timing[String(field[..<equals])] = String(field[field.index(after: equals)...])
            }
        }
        return NWCatRun(status: result.status, standardError: result.error, elapsed: elapsed, timing: timing)
    }

    /// One curl run in the client namespace: the independent anchor.
    struct CurlRun {
        let status: Int32?
        let standardError: String
        let remoteIP: String
        let httpCode: String
        /// Start until the TCP connection (to the server or the proxy) was up, resolution included.
        let timeConnect: Double
        /// Start until curl could send its request: through a proxy, the tunnel is up too.
        let timePretransfer: Double
    }

    /// `curl ARGUMENTS URL` in the client namespace.
    func curl(_ arguments: [String], url: String, timeout: Double = 20) async throws -> CurlRun {
        let result = try await ToolProcess.run(
            ip,
            ["netns", "exec", client.name] + cleanEnvironment + [
                curl, "-sS", "-o", "/dev/null", "-w", "%{remote_ip} %{http_code} %{time_connect} %{time_pretransfer}",
            ] + arguments + [url], timeout: timeout)
        let fields = result.output.split(separator: " ").map(String.init)
        return CurlRun(
            status: result.status, standardError: result.error, remoteIP: fields.first ?? "",
            httpCode: fields.count > 1 ? fields[1] : "",
            timeConnect: fields.count > 2 ? Double(fields[2]) ?? -1 : -1,
            timePretransfer: fields.count > 3 ? Double(fields[3]) ?? -1 : -1)
    }
}

/// A lab setup step that could not be done.
struct LabError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
