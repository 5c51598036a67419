import CDuktape

/// What the engine's C callbacks (allocator, fatal handler, native PAC functions) reach through
/// the heap's user-data pointer. C callbacks cannot capture Swift state, so everything they need
/// hangs off this one object, which the heap keeps alive for as long as it exists.
final class DuktapeHeapContext: Sendable {
    /// The heap's memory account; the allocator callbacks go through it.
    let budget: DuktapeMemoryBudget
    /// Name lookups, local addresses and clock for the native PAC functions.
    let environment: PACHostEnvironment
    /// Told about a fatal engine error, on the engine's thread, before that thread is parked.
    let onFatal: @Sendable (String) -> Void

    /// Bundles what the callbacks of one heap need.
    init(budget: DuktapeMemoryBudget, environment: PACHostEnvironment, onFatal: @escaping @Sendable (String) -> Void) {
        self.budget = budget
        self.environment = environment
        self.onFatal = onFatal
    }

    /// The context of the heap `ctx` belongs to (the allocator's user data is the context).
    static func of(_ ctx: OpaquePointer) -> DuktapeHeapContext? {
        var functions = duk_memory_functions()
        duk_get_memory_functions(ctx, &functions)
        guard let udata = functions.udata else { return nil }
        return Unmanaged<DuktapeHeapContext>.fromOpaque(udata).takeUnretainedValue()
    }

    /// The context behind a callback's user-data pointer.
    static func of(udata: UnsafeMutableRawPointer?) -> DuktapeHeapContext? {
        guard let udata else { return nil }
        return Unmanaged<DuktapeHeapContext>.fromOpaque(udata).takeUnretainedValue()
    }
}
