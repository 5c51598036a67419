import Foundation
import Testing

/// A Python HTTP server for PAC-loading tests (NetworkPAC's plain HTTP ones and the engine's
/// HTTPS one): serves a folder, over TLS when given a certificate and key, and also answers
/// `/moved` (302 to `/test.pac`, relative), `/loop` (302 to itself) and `/down` (302 to a URL
/// the caller names).
public enum PACScriptServer {
    /// Starts it for `folder` (over TLS with `certificate`/`key` when given, `/down` leading to
    /// `downgrade`); returns the process and its port, or nil when python3 is not installed.
    public static func start(
        _ folder: URL, certificate: String? = nil, key: String? = nil, downgrade: String = ""
    ) async throws -> (PeerProcess, Int)? {
        guard let python = PeerProcess.executable("python3", package: "python3") else { return nil }
        let program = folder.appendingPathComponent("server.py")
        try """
            import functools, http.server, ssl, sys
            class Handler(http.server.SimpleHTTPRequestHandler):
                def log_message(self, *arguments):
                    pass
                def do_GET(self):
                    targets = {"/moved": "/test.pac", "/loop": "/loop", "/down": sys.argv[4]}
                    if self.path in targets:
                        self.send_response(302)
                        self.send_header("Location", targets[self.path])
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                    else:
                        super().do_GET()
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=sys.argv[1]))
            if sys.argv[2]:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(sys.argv[2], sys.argv[3])
                server.socket = context.wrap_socket(server.socket, server_side=True)
            print("port", server.server_address[1], flush=True)
            server.serve_forever()
            """.write(to: program, atomically: true, encoding: .utf8)
        let server = try PeerProcess(python, ["-u", program.path, folder.path, certificate ?? "", key ?? "", downgrade])
        // The whole line: its number can arrive in a later read than "port ".
        let banner = try await server.waitForLines(startingWith: "port ", count: 1)[0]
        let port = try #require(Int(banner.dropFirst(5)), "the PAC server said \(banner.debugDescription)")
        return (server, port)
    }
}
