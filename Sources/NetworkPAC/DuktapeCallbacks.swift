#if canImport(Glibc)
import Glibc
#endif
import CDuktape

/// The C entry points Duktape calls for memory and fatal errors. They are plain C function
/// pointers, so each finds its heap's state through the user-data pointer.
enum DuktapeCallbacks {
    /// malloc for the heap: goes through the heap's budget, which may refuse.
    static let allocate: duk_alloc_function = { udata, size in
        DuktapeHeapContext.of(udata: udata)?.budget.allocate(size)
    }

    /// realloc for the heap: growth is checked against the budget, shrinking always works.
    static let reallocate: duk_realloc_function = { udata, pointer, size in
        DuktapeHeapContext.of(udata: udata)?.budget.reallocate(pointer, size)
    }

    /// free for the heap: gives the bytes back to the budget.
    static let release: duk_free_function = { udata, pointer in
        DuktapeHeapContext.of(udata: udata)?.budget.release(pointer)
    }

    /// Duktape calls this for errors it cannot throw (an error outside any protected call, an
    /// internal assertion) and calls `abort()` if it returns. Swift cannot `longjmp` back to a
    /// safe point, so the handler reports the failure and then parks its thread for good: the
    /// process lives on, the evaluator is marked unusable, and the heap (bounded by its cap) and
    /// the parked thread are leaked. Every engine call is protected, so this is a last resort.
    static let fatal: duk_fatal_function = { udata, message in
        let text = message.map { String(cString: $0) } ?? "unknown fatal error"
        DuktapeHeapContext.of(udata: udata)?.onFatal(text)
        while true { sleep(3600) }
    }
}
