#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CNetworkSystem

extension DirectSocket {
    /// The most datagrams one `sendmmsg` call takes here.
    static let datagramsPerCall = Int(CNS_DATAGRAMS_PER_CALL)

    /// Sends datagrams on a connected datagram socket with as few `sendmmsg` calls as the
    /// socket allows (one for up to `datagramsPerCall`), without blocking and without SIGPIPE.
    /// The datagrams lie back to back in `bytes`, `lengths` giving their sizes. Answers how many
    /// went out, in order, and the error that stopped the rest (nil when all went out or the
    /// socket's buffer is full).
    package func sendDatagrams(_ bytes: UnsafeRawBufferPointer, lengths: [Int]) -> (sent: Int, failure: Int32?) {
        let count = lengths.count
        guard count > 0 else { return (0, nil) }
        let capacity = min(count, Self.datagramsPerCall)
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: capacity) { vectors in
            var sent = 0
            var offset = 0
            while sent < count {
                let batch = min(capacity, count - sent)
                var position = offset
                for index in 0..<batch {
                    let length = lengths[sent + index]
                    vectors[index] = iovec(
                        iov_base: bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0 + position) },
                        iov_len: length)
                    position += length
                }
                let result = cns_send_datagrams(
                    descriptor, vectors.baseAddress, UInt32(batch), Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                if result < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    return (sent, code == EAGAIN || code == EWOULDBLOCK ? nil : code)
                }
                if result == 0 { return (sent, nil) }
                for index in 0..<Int(result) { offset += lengths[sent + index] }
                sent += Int(result)
                // Fewer than offered: the next call says why (a full buffer, or an error).
            }
            return (sent, nil)
        }
    }
}
