#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Small sends on a ready plain-TCP connection may be written from the sender's thread
    /// (docs/data-path.md, "Direct writes"); whatever the socket does not take goes through the
    /// event loop. These play senders against a full socket, where both paths take turns.
    @Suite("Behaviour.DirectWrites")
    struct DirectWrites {
        @Test("small sends from four threads into a peer that reads late arrive whole, each thread's in order")
        func concurrentSmallSendsStayWholeAndOrdered() async throws {
            let server = try RawSocket.tcpServer()
            let probe = Probe(port: server.localPort)
            try await probe.startAndWaitReady()
            let peer = try server.accept()
            defer { peer.close() }

            let chunk = 16 * 1024
            let perThread = 300
            let threads = 4
            let completions = (0..<threads).map { _ in Recorder<Int>() }
            let connection = probe.connection
            // All threads send at once; the peer reads nothing yet, so the socket fills, direct
            // writes go partial or find it full, and the rest queues for the loop.
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread {
                    var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 7 &+ thread), count: chunk)
                    bytes[0] = UInt8(thread)
                    bytes[1] = UInt8(truncatingIfNeeded: index)
                    bytes[2] = UInt8(truncatingIfNeeded: index >> 8)
                    connection.send(content: Data(bytes), completion: .contentProcessed { error in
                        completions[thread].append(error == nil ? index : -1)
                    })
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            let received = try peer.receiveExactly(threads * perThread * chunk, timeout: 30)

            var next = [Int](repeating: 0, count: threads)
            for offset in stride(from: 0, to: received.count, by: chunk) {
                let thread = Int(received[offset])
                try #require(thread < threads, "chunk at \(offset) starts with \(received[offset])")
                let index = Int(received[offset + 1]) | Int(received[offset + 2]) << 8
                #expect(index == next[thread], "thread \(thread): chunk \(index) where \(next[thread]) was due")
                let fill = UInt8(truncatingIfNeeded: index &* 7 &+ thread)
                let whole = received[(offset + 3)..<(offset + chunk)].allSatisfy { $0 == fill }
                try #require(whole, "chunk \(index) of thread \(thread) at \(offset) is not whole")
                next[thread] = index + 1
            }
            #expect(next == [Int](repeating: perThread, count: threads))
            for thread in 0..<threads {
                let done = try await completions[thread].wait("thread \(thread)'s completions", timeout: 10) {
                    $0.count == perThread
                }
                #expect(done == Array(0..<perThread), "completions of thread \(thread) out of order or failed")
            }
            try await probe.cancelAndWait()
        }
    }
}
