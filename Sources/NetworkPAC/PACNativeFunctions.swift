import CDuktape

/// The only native code a PAC script can reach: three functions that hand it the host services
/// of `PACHostEnvironment`. The JavaScript helper library captures them under private names and
/// removes them from the global object; everything else (address parsing, matching, dates) is
/// JavaScript, so the attack surface in native code stays this small.
///
/// Each returns one value to the script. If pushing that value fails for lack of memory, Duktape
/// leaves the function by `longjmp`; the bodies therefore do their Swift work first and push last.
enum PACNativeFunctions {
    /// `__pacResolve(host)`: every address of `host`, joined by `;` (empty when unknown).
    static let resolve: duk_c_function = { ctx in
        guard let ctx, let context = DuktapeHeapContext.of(ctx), !context.budget.isPoisoned else { return throwError }
        var length: duk_size_t = 0
        guard let raw = duk_get_lstring(ctx, 0, &length), length > 0 else {
            push("", on: ctx)
            return 1
        }
        let host = String(decoding: UnsafeRawBufferPointer(start: raw, count: Int(length)), as: UTF8.self)
        push(context.environment.resolve(host).joined(separator: ";"), on: ctx)
        return 1
    }

    /// `__pacMyAddresses()`: this machine's addresses, joined by `;`.
    static let localAddresses: duk_c_function = { ctx in
        guard let ctx, let context = DuktapeHeapContext.of(ctx), !context.budget.isPoisoned else { return throwError }
        push(context.environment.localAddresses().joined(separator: ";"), on: ctx)
        return 1
    }

    /// `__pacNow()`: the current time in milliseconds since 1970, for `new Date(…)`.
    static let now: duk_c_function = { ctx in
        guard let ctx, let context = DuktapeHeapContext.of(ctx), !context.budget.isPoisoned else { return throwError }
        duk_push_number(ctx, context.environment.now().timeIntervalSince1970 * 1000)
        return 1
    }

    /// Installs the three functions on a fresh heap, under the names the helper library expects.
    static func install(on heap: DuktapeHeap) throws(DuktapeFailure) {
        try heap.define("__pacResolve", resolve, argumentCount: 1)
        try heap.define("__pacMyAddresses", localAddresses, argumentCount: 0)
        try heap.define("__pacNow", now, argumentCount: 0)
    }

    // Returning a negative code makes Duktape throw the matching error (here DUK_RET_ERROR, a
    // plain Error) without this frame being skipped by a longjmp.
    private static let throwError: duk_ret_t = -duk_ret_t(DUK_ERR_ERROR)

    /// Pushes `text` as the function's return value.
    private static func push(_ text: String, on ctx: OpaquePointer) {
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { _ = duk_push_lstring(ctx, $0.baseAddress, duk_size_t($0.count)) }
        }
    }
}
