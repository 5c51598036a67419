import Foundation
import Testing

/// A small real DNS server (Python, standard library only, on 127.0.0.1 UDP) whose answer
/// depends on the first label of the name asked, for the failures dnsmasq cannot be made to
/// produce on demand:
///
/// - `servfail.*`, `refused.*`, `notimp.*`, `nxdomain.*`: that RCODE;
/// - `update.*`: a NOERROR reply with an address, but with opcode 5 (UPDATE);
/// - `updatefirst.*`: that opcode-5 reply (192.0.2.66), then 100 ms later the real one;
/// - `malformed.*`: our ID and question, then an answer record cut off in its RDATA;
/// - anything else: NOERROR with A 192.0.2.1 (A queries) or no records.
public final class MisbehavingDNSServer: Sendable {
    public let process: PeerProcess
    public let port: UInt16

    static let script = #"""
        import socket, struct, time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        print("port", s.getsockname()[1], flush=True)
        CUT = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([192, 0])
        def address(last):
            return b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([192, 0, 2, last])
        while True:
            query, peer = s.recvfrom(4096)
            qid = struct.unpack(">H", query[:2])[0]
            i, labels = 12, []
            while query[i]:
                labels.append(query[i + 1:i + 1 + query[i]].decode().lower())
                i += 1 + query[i]
            question = query[12:i + 5]
            qtype = struct.unpack(">H", query[i + 1:i + 3])[0]
            def reply(rcode=0, opcode=0, answer=b""):
                flags = 0x8000 | opcode << 11 | 0x0180 | rcode
                return struct.pack(">HHHHHH", qid, flags, 1, 1 if answer else 0, 0, 0) + question + answer
            kind = labels[0]
            codes = {"servfail": 2, "refused": 5, "notimp": 4, "nxdomain": 3}
            if kind in codes:
                s.sendto(reply(codes[kind]), peer)
            elif kind == "update":
                s.sendto(reply(0, 5, address(66)), peer)
            elif kind == "updatefirst":
                s.sendto(reply(0, 5, address(66) if qtype == 1 else b""), peer)
                time.sleep(0.1)
                s.sendto(reply(0, 0, address(1) if qtype == 1 else b""), peer)
            elif kind == "malformed":
                s.sendto(reply(0, 0, CUT), peer)
            else:
                s.sendto(reply(0, 0, address(1) if qtype == 1 else b""), peer)
        """#

    /// Starts it; nil (after recording a failure under CI) when python3 is missing.
    public static func start() async throws -> MisbehavingDNSServer? {
        guard let python = PeerProcess.executable("python3") else { return nil }
        let process = try PeerProcess(python, ["-c", script])
        try await process.waitForOutput(containing: "\n")
        let line = String(decoding: process.standardOutput, as: UTF8.self)
        guard let port = line.split(separator: " ").last.flatMap({ UInt16($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        else {
            process.stop()
            throw BehaviourTimeout(what: "the DNS server's port (got \(line.debugDescription))", seconds: 0)
        }
        return MisbehavingDNSServer(process: process, port: port)
    }

    private init(process: PeerProcess, port: UInt16) {
        self.process = process
        self.port = port
    }

    /// Stops the server.
    public func stop() { process.stop() }
}
