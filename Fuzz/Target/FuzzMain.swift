#if canImport(Glibc)
import Glibc
#endif
import NetworkFuzzing

#if NETWORK_LIBFUZZER
/// libFuzzer's driver (compiler-rt, LLVM 11 and later), for a program that has its own `main`:
/// SwiftPM always gives an executable one (it renames it for testability), so libFuzzer's
/// `main` cannot be the program's.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
#endif

/// `fuzz-network`'s `main`. Built with libFuzzer (`NETWORK_LIBFUZZER` defined) it hands the
/// command line to libFuzzer; otherwise it replays files: `fuzz-network TARGET [FILE or
/// DIRECTORY...]`, the target's seed corpus when no file is named.
@main
enum FuzzMain {
    static func main() {
        #if NETWORK_LIBFUZZER
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        // A closure, not `fuzzOneInput` itself: converting that function to a C pointer makes a
        // debug (per-file) build emit its `LLVMFuzzerTestOneInput` symbol in this file too, and
        // the link then finds two.
        exit(runFuzzerDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
        #else
        FuzzReplay.main()
        #endif
    }
}
