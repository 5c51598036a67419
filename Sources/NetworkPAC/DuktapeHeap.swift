import CDuktape

/// Why the engine refused a piece of work: its error message, and whether the heap refused
/// memory meanwhile (which turns a vague `RangeError` into a clear memory-limit failure).
struct DuktapeFailure: Error {
    /// The engine's text for the error (e.g. "SyntaxError: … (line 3)").
    let message: String
    /// True when the budget refused memory during the failed operation.
    let hitMemoryLimit: Bool
}

/// What a call or a run of global code produced.
enum DuktapeValue: Equatable {
    /// A string, copied out of the heap.
    case string(String)
    /// Any other value, named by its engine type (undefined, null, boolean, number, object, …).
    case other(String)
}

/// One Duktape heap: a fresh, isolated JavaScript world for one PAC script.
///
/// Every operation enters the engine through `duk_safe_call`, so script errors, memory refusals
/// and errors raised while pushing arguments are all caught there and come back as
/// `DuktapeFailure`; nothing reaches Duktape's fatal handler in normal operation. The bodies
/// passed to `duk_safe_call` are C callbacks that touch only raw pointers, because an engine
/// error leaves them by `longjmp`, which would skip any Swift cleanup.
///
/// Not thread-safe: a heap lives and dies on its evaluator's thread.
final class DuktapeHeap {
    /// The state the heap's C callbacks reach (budget, host services).
    let context: DuktapeHeapContext
    private let ctx: OpaquePointer
    private let retainedContext: Unmanaged<DuktapeHeapContext>

    /// Creates an empty heap whose allocations and fatal errors go through `context`.
    init(context: DuktapeHeapContext) throws(DuktapeFailure) {
        let retained = Unmanaged.passRetained(context)
        guard let ctx = duk_create_heap(
            DuktapeCallbacks.allocate, DuktapeCallbacks.reallocate, DuktapeCallbacks.release,
            retained.toOpaque(), DuktapeCallbacks.fatal)
        else {
            retained.release()
            throw DuktapeFailure(message: "the JavaScript heap could not be created", hitMemoryLimit: false)
        }
        self.context = context
        self.ctx = ctx
        self.retainedContext = retained
    }

    /// The raw engine context, for tests that must drive Duktape outside the protected paths
    /// (the fatal-error test). Production code goes through the methods below.
    var rawContext: OpaquePointer { ctx }

    deinit {
        duk_destroy_heap(ctx)
        retainedContext.release()
    }

    /// Runs `source` as global code (function declarations become globals); returns its
    /// completion value.
    @discardableResult
    func run(_ source: String) throws(DuktapeFailure) -> DuktapeValue {
        var source = source
        return try source.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                var request = DuktapeRunRequest(source: chars.baseAddress, length: chars.count)
                return protectedCall(DuktapeRunRequest.body, &request)
            }
        }.get()
    }

    /// Calls the global function `name` with string arguments; returns what it returned.
    func call(_ name: String, arguments: [String]) throws(DuktapeFailure) -> DuktapeValue {
        // One buffer holds every argument back to back, so the C body sees plain pointers.
        var storage: [CChar] = []
        var ranges: [(offset: Int, length: Int)] = []
        for argument in arguments {
            let bytes = Array(argument.utf8)
            ranges.append((storage.count, bytes.count))
            storage.append(contentsOf: bytes.map { CChar(bitPattern: $0) })
        }
        return try storage.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress
            let strings = ranges.map { range in DuktapeString(bytes: base.map { $0 + range.offset }, length: range.length) }
            return strings.withUnsafeBufferPointer { argumentsPointer in
                name.withCString { namePointer in
                    var request = DuktapeCallRequest(
                        name: namePointer, arguments: argumentsPointer.baseAddress, count: argumentsPointer.count)
                    return protectedCall(DuktapeCallRequest.body, &request)
                }
            }
        }.get()
    }

    /// Makes the C function `function` callable from scripts as the global `name`.
    func define(_ name: String, _ function: duk_c_function, argumentCount: Int32) throws(DuktapeFailure) {
        _ = try name.withCString { namePointer in
            var request = DuktapeDefineRequest(name: namePointer, function: function, argumentCount: argumentCount)
            return protectedCall(DuktapeDefineRequest.body, &request)
        }.get()
    }

    /// Runs `body` under `duk_safe_call` with `request` as its user data, and turns the outcome
    /// (one value on the stack either way) into a Swift value or failure.
    private func protectedCall<Request>(
        _ body: duk_safe_call_function, _ request: inout Request
    ) -> Result<DuktapeValue, DuktapeFailure> {
        let refusalsBefore = context.budget.refusedAllocations
        let status = withUnsafeMutablePointer(to: &request) { duk_safe_call(ctx, body, $0, 0, 1) }
        defer { duk_pop(ctx) }
        guard status == 0 else {
            // The safe variant never throws: if the error cannot be turned into text, Duktape
            // substitutes a fixed string.
            return .failure(DuktapeFailure(
                message: topString(duk_safe_to_lstring) ?? "unknown error",
                hitMemoryLimit: context.budget.refusedAllocations > refusalsBefore))
        }
        switch Int(duk_get_type(ctx, -1)) {
        case Int(DUK_TYPE_STRING): return .success(.string(topString(duk_get_lstring) ?? ""))
        case Int(DUK_TYPE_UNDEFINED): return .success(.other("undefined"))
        case Int(DUK_TYPE_NULL): return .success(.other("null"))
        case Int(DUK_TYPE_BOOLEAN): return .success(.other("boolean"))
        case Int(DUK_TYPE_NUMBER): return .success(.other("number"))
        default: return .success(.other("object"))
        }
    }

    /// The value on top of the stack as text, through `read` (plain or coercing read).
    private func topString(
        _ read: (OpaquePointer?, duk_idx_t, UnsafeMutablePointer<duk_size_t>?) -> UnsafePointer<CChar>?
    ) -> String? {
        var length: duk_size_t = 0
        guard let pointer = read(ctx, -1, &length) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
    }
}

/// A string handed to a C body as pointer and length (arguments may contain NUL).
struct DuktapeString {
    let bytes: UnsafePointer<CChar>?
    let length: Int
}

/// User data of the body that runs global code.
private struct DuktapeRunRequest {
    let source: UnsafePointer<CChar>?
    let length: Int

    /// Compiles and runs the source; leaves its completion value on the stack.
    static let body: duk_safe_call_function = { ctx, udata in
        guard let ctx, let request = udata?.assumingMemoryBound(to: DuktapeRunRequest.self).pointee else { return 0 }
        // Eval code (not program code) so the completion value comes back; function
        // declarations still land on the global object because this is an indirect eval.
        let flags = duk_uint_t(DUK_COMPILE_EVAL | DUK_COMPILE_NOSOURCE | DUK_COMPILE_NOFILENAME)
        _ = duk_eval_raw(ctx, request.source, duk_size_t(request.length), flags)
        return 1
    }
}

/// User data of the body that calls a global function.
private struct DuktapeCallRequest {
    let name: UnsafePointer<CChar>
    let arguments: UnsafePointer<DuktapeString>?
    let count: Int

    /// Looks up the function, pushes the arguments and calls it; leaves the return value.
    static let body: duk_safe_call_function = { ctx, udata in
        guard let ctx, let request = udata?.assumingMemoryBound(to: DuktapeCallRequest.self).pointee else { return 0 }
        _ = duk_get_global_string(ctx, request.name)
        for index in 0..<request.count {
            guard let argument = request.arguments?[index] else { continue }
            _ = duk_push_lstring(ctx, argument.bytes, duk_size_t(argument.length))
        }
        duk_call(ctx, duk_idx_t(request.count))
        return 1
    }
}

/// User data of the body that installs a native function.
private struct DuktapeDefineRequest {
    let name: UnsafePointer<CChar>
    let function: duk_c_function
    let argumentCount: Int32

    /// Pushes the C function and stores it on the global object.
    static let body: duk_safe_call_function = { ctx, udata in
        guard let ctx, let request = udata?.assumingMemoryBound(to: DuktapeDefineRequest.self).pointee else { return 0 }
        _ = duk_push_c_function(ctx, request.function, duk_idx_t(request.argumentCount))
        _ = duk_put_global_string(ctx, request.name)
        return 0
    }
}
