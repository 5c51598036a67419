#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import NIOCore

/// The session's transport as GnuTLS sees it: the C callbacks it calls (on the loop, inside our
/// own calls into it) to read queued ciphertext and to write records out.
extension GnuTLSSession {
    func pull(into buffer: UnsafeMutableRawPointer?, size: Int) -> Int {
        guard var datagram = inbound.popFirst() else {
            // Nothing more will come on a closed stream: a read of nothing is the end.
            if stream && inputClosed { return 0 }
            gnutls_transport_set_errno(session, EAGAIN)
            return -1
        }
        let count = min(size, datagram.readableBytes)
        datagram.withUnsafeReadableBytes { bytes in
            if let buffer, let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: count) }
        }
        if stream && count < datagram.readableBytes {
            // A stream is bytes, not messages: keep the rest for the next read.
            datagram.moveReaderIndex(forwardBy: count)
            inbound.prepend(datagram)
        }
        return count
    }

    var hasInput: Bool { !inbound.isEmpty || (stream && inputClosed) }

    func push(_ bytes: UnsafeRawPointer?, size: Int) -> Int {
        var datagram = ByteBufferAllocator().buffer(capacity: size)
        if let bytes { datagram.writeBytes(UnsafeRawBufferPointer(start: bytes, count: size)) }
        let promise = writePromise
        writePromise = nil
        write(datagram, promise)
        return size
    }
}

private func owner(_ pointer: gnutls_transport_ptr_t?) -> GnuTLSSession? {
    pointer.map { Unmanaged<GnuTLSSession>.fromOpaque($0).takeUnretainedValue() }
}

func gnuTLSPull(_ pointer: gnutls_transport_ptr_t?, _ buffer: UnsafeMutableRawPointer?, _ size: Int) -> Int {
    owner(pointer)?.pull(into: buffer, size: size) ?? -1
}

func gnuTLSPullTimeout(_ pointer: gnutls_transport_ptr_t?, _ milliseconds: UInt32) -> Int32 {
    // Non-blocking: never wait; say whether a datagram is queued.
    (owner(pointer)?.hasInput ?? false) ? 1 : 0
}

func gnuTLSPush(_ pointer: gnutls_transport_ptr_t?, _ bytes: UnsafeRawPointer?, _ size: Int) -> Int {
    owner(pointer)?.push(bytes, size: size) ?? -1
}
