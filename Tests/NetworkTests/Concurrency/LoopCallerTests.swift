import Foundation
import PeerSupport
import Synchronization
import Testing

@testable import Network

/// Operations a task issues on its connection's own event loop (`withNetworkConnection`'s body
/// prefers it): they run at once instead of through the flow's mailbox, message sends leave in
/// one flush per loop turn, and a receive with a message (or bytes) already there does not
/// suspend (`Flow+LoopCallers`). Against `game_peer.py`, python's reading of the same game
/// protocol, and a python stream that arrives in drips.
@Suite("Concurrency.LoopCallers")
struct LoopCallerTests {
    @Test("on the connection's loop, 64 messages sent in a row pass the framer at once, complete without waiting for the socket, leave in one flush, and come back in order")
    func burstLeavesInOneFlush() async throws {
        guard let peer = try await GamePeer.start(["echo"]) else { return }
        defer { peer.process.stop() }
        try await withNetworkConnection(to: peer.endpoint, using: { Framer<GameFramer> { TCP() } }) { connection in
            // (The first exchange waits for ready: sends before it are held, not sent at once.)
            try await connection.send(GamePeer.payload(0, size: 8), metadata: GamePeer.message(type: 9))
            _ = try await connection.receive()
            let flow = connection.core.flow
            let before = flow.flushCount
            for index in 0..<64 {
                try await connection.send(GamePeer.payload(index, size: 100), metadata: GamePeer.message(type: 1))
            }
            // Through the mailbox, each send would have waited for its own flush.
            #expect(flow.flushCount == before, "flushed while the task kept the loop")
            for index in 0..<64 {
                let (content, metadata) = try await connection.receive()
                #expect(content == GamePeer.payload(index, size: 100))
                #expect(metadata.message?["type"] as? UInt32 == 1001)
            }
            #expect(flow.flushCount == before + 1, "64 messages, \(flow.flushCount - before) flushes")
        }
        try await peer.process.waitForOutput(containing: "frames 65")
    }

    @Test("a sender on the loop that never waits is flushed every 64 KiB, and waits for the socket once it is full: 8,192 messages of 1,000 bytes reach a peer that reads late, whole and in order")
    func senderThatNeverWaits() async throws {
        guard let peer = try await GamePeer.start(["sink", "0.5"]) else { return }
        defer { peer.process.stop() }
        let count = 8_192
        try await withNetworkConnection(to: peer.endpoint, using: { Framer<GameFramer> { TCP() } }) { connection in
            try await connection.send(GamePeer.payload(0, size: 1_000), metadata: GamePeer.message(type: 1))
            let flow = connection.core.flow
            let before = flow.flushCount
            for index in 1..<count {
                try await connection.send(GamePeer.payload(index, size: 1_000), metadata: GamePeer.message(type: 1))
            }
            // 8 MB in all: at least one flush per 64 KiB of messages, 66 of them (more once the
            // socket is full and sends take the mailbox's way).
            #expect(flow.flushCount - before >= (count - 1) / 66, "\(flow.flushCount - before) flushes")
        }
        try await peer.process.waitForOutput(containing: "frames \(count)", timeout: 60)
        #expect(!String(decoding: peer.process.standardOutput, as: UTF8.self).contains("bad at"))
    }

    @Test("a sender on the loop that never waits still lets the loop go round: work queued on the loop before it starts runs within its first 64 KiB, though the peer reads everything at once")
    func senderLetsTheLoopGoRound() async throws {
        guard let peer = try await GamePeer.start(["sink", "0"]) else { return }
        defer { peer.process.stop() }
        let count = 4_000
        let sent = Atomic<Int>(0)
        let sentWhenQueuedWorkRan = Atomic<Int>(-1)
        try await withNetworkConnection(to: peer.endpoint, using: { Framer<GameFramer> { TCP() } }) { connection in
            try await connection.send(GamePeer.payload(0, size: 1_000), metadata: GamePeer.message(type: 1))
            connection.core.flow.executeOnLoop { sentWhenQueuedWorkRan.store(sent.load(ordering: .relaxed), ordering: .relaxed) }
            for index in 1..<count {
                try await connection.send(GamePeer.payload(index, size: 1_000), metadata: GamePeer.message(type: 1))
                sent.store(index, ordering: .relaxed)
            }
        }
        let ranAt = sentWhenQueuedWorkRan.load(ordering: .relaxed)
        // 66 messages of 1,000 bytes make 64 KiB; the 67th waits for the loop.
        #expect((0...67).contains(ranAt), "the queued work ran after message \(ranAt)")
        try await peer.process.waitForOutput(containing: "frames \(count)", timeout: 30)
    }

    @Test("sends from the loop and from a task elsewhere at the same time: neither overtakes its own earlier messages (2,000 each, counted per sender by the peer)")
    func loopAndElsewhereKeepTheirOrder() async throws {
        guard let peer = try await GamePeer.start(["sink", "0"]) else { return }
        defer { peer.process.stop() }
        let count = 2_000
        try await withNetworkConnection(to: peer.endpoint, using: { Framer<GameFramer> { TCP() } }) { connection in
            let elsewhere = Task.detached {
                for index in 0..<count {
                    try await connection.send(GamePeer.payload(index, size: 64), metadata: GamePeer.message(type: 2))
                }
            }
            for index in 0..<count {
                try await connection.send(GamePeer.payload(index, size: 64), metadata: GamePeer.message(type: 1))
                if index % 100 == 0 { await Task.yield() }
            }
            try await elsewhere.value
        }
        try await peer.process.waitForOutput(containing: "frames \(2 * count)", timeout: 30)
        #expect(!String(decoding: peer.process.standardOutput, as: UTF8.self).contains("bad at"))
    }

    @Test("stream receives on the loop, some served from what is buffered, others queued directly with the flow: 200,000 bytes arriving in drips of 1 to 3,000 bytes come out whole and in order, then the end of the stream")
    func streamReceivesInDrips() async throws {
        guard let python = PeerProcess.executable("python3", package: "python3") else { return }
        // (Deterministic drips: sizes from a fixed seed, a pause after every tenth.)
        let script = """
            import random, socket, sys, time
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
            print("port", s.getsockname()[1], flush=True)
            c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            data = bytes((i * 7 + i // 251) % 256 for i in range(200000))
            rng = random.Random(7); at = 0; n = 0
            while at < len(data):
                size = rng.randint(1, 3000); c.sendall(data[at:at + size]); at += size; n += 1
                if n % 10 == 0: time.sleep(0.002)
            c.shutdown(socket.SHUT_WR); c.recv(1); c.close()
            """
        let process = try PeerProcess(python, ["-c", script])
        defer { process.stop() }
        // The whole line: its number can arrive in a later read than "port ".
        let line = try await process.waitForLines(startingWith: "port ", count: 1)[0]
        let port = try #require(UInt16(line.dropFirst(5)), "game_peer.py said \(line.debugDescription)")
        var expected = Data(count: 200_000)
        for index in 0..<expected.count { expected[index] = UInt8(truncatingIfNeeded: index * 7 + index / 251) }
        var received = Data()
        try await withNetworkConnection(to: .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!), using: { TCP() }) { connection in
            var turn = 0
            while received.count < expected.count {
                // Exact sizes (waiting for several drips) and whatever is there (often buffered).
                let left = expected.count - received.count
                let content: Data
                if turn % 2 == 0 {
                    content = try await connection.receive(exactly: min(1_000 + turn % 5_000, left)).content
                } else {
                    content = try await connection.receive(atMost: 4_096).content
                }
                #expect(!content.isEmpty)
                received.append(content)
                turn += 1
            }
            #expect(try await connection.receive(atMost: 10).metadata.endOfStream)
        }
        #expect(received == expected)
    }
}

/// `game_peer.py`, listening.
struct GamePeer {
    let process: PeerProcess
    let endpoint: NWEndpoint

    /// Starts the peer with `arguments`; nil (a failure under CI) without python3.
    static func start(_ arguments: [String]) async throws -> GamePeer? {
        guard let python = PeerProcess.executable("python3", package: "python3") else { return nil }
        let process = try PeerProcess(python, [PythonPeer.scripts.appendingPathComponent("game_peer.py").path] + arguments)
        // The whole line: its number can arrive in a later read than "port ".
        let line = try await process.waitForLines(startingWith: "port ", count: 1)[0]
        let port = try #require(UInt16(line.dropFirst(5)), "game_peer.py said \(line.debugDescription)")
        return GamePeer(process: process, endpoint: .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!))
    }

    /// A framer message of `type`.
    static func message(type: UInt32) -> NWProtocolFramer.Message {
        let message = NWProtocolFramer.Message(definition: GameFramer.definition)
        message["type"] = type
        return message
    }

    /// `size` bytes starting with `index` (4 bytes, big-endian), the rest a pattern of it.
    static func payload(_ index: Int, size: Int) -> Data {
        var data = Data(count: size)
        for offset in 0..<size { data[offset] = UInt8(truncatingIfNeeded: index &+ offset) }
        withUnsafeBytes(of: UInt32(index).bigEndian) { data.replaceSubrange(0..<4, with: $0) }
        return data
    }
}
