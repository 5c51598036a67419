// This file imports only `Network` (and the test library): everything it names must come with
// `import Network`, as it does on Apple platforms, where the module re-exports Dispatch, the C
// library and the Security framework (Apple's peer-to-peer sample relies on it).
import Network
import Testing

@Suite("Module.ImportNetworkOnly")
struct ImportNetworkOnlyTests {
    @Test("Dispatch comes with Network: queues and DispatchData")
    func dispatchIsVisible() async {
        let queue = DispatchQueue(label: "import-network-only")
        let bytes: [UInt8] = [1, 2, 3]
        let count = await withCheckedContinuation { continuation in
            queue.async {
                let data = bytes.withUnsafeBytes { DispatchData(bytes: $0) }
                continuation.resume(returning: data.count)
            }
        }
        #expect(count == 3)
    }

    @Test("The C library comes with Network: socket constants, sockaddr_in, libc calls")
    func cLibraryIsVisible() {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(7777).bigEndian
        #expect(MemoryLayout<sockaddr_in>.size == 16)
        #expect(Int32(IPPROTO_TCP) == 6)
        #expect(Int32(IPPROTO_UDP) == 17)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        #expect(close(fd) == 0)
        // abort() is only named, not called: it must resolve with `import Network` alone.
        let abortFunction: () -> Never = abort
        _ = abortFunction
        #expect(getpid() > 0)
    }

    @Test("SecRandomCopyBytes fills buffers from the system generator, as Apple code calls it")
    func secRandomCopyBytes() {
        var first = [UInt8](repeating: 0, count: 64)
        var second = [UInt8](repeating: 0, count: 64)
        #expect(SecRandomCopyBytes(kSecRandomDefault, first.count, &first) == errSecSuccess)
        #expect(SecRandomCopyBytes(kSecRandomDefault, second.count, &second) == errSecSuccess)
        // 64 random bytes are all zero, or equal twice, with probability 2^-512.
        #expect(first != [UInt8](repeating: 0, count: 64))
        #expect(first != second)

        var single: UInt8 = 0
        #expect(SecRandomCopyBytes(kSecRandomDefault, 1, &single) == errSecSuccess)

        var nothing: UInt8 = 0xAB
        #expect(SecRandomCopyBytes(kSecRandomDefault, 0, &nothing) == errSecSuccess)
        #expect(nothing == 0xAB)
        #expect(SecRandomCopyBytes(nil, -1, &nothing) == errSecParam)
    }

    @Test("SecRandomCopyBytes fills a large buffer to its end")
    func secRandomCopyBytesLarge() {
        let count = (1 << 20) + 100  // many getentropy calls of 256 bytes, the last one short
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        #expect(SecRandomCopyBytes(kSecRandomDefault, count, buffer.baseAddress!) == errSecSuccess)
        // The tail was filled too: 4 KiB of zeros there is 2^-32768 likely.
        let tail = UnsafeRawBufferPointer(rebasing: buffer[(count - 4096)...])
        #expect(tail.contains { $0 != 0 })
    }
}
