// ThreadSanitizer's happens-before annotations, for locks whose hand-over it cannot see.
//
// Only declared: `Lock` calls them in builds compiled with -DNETWORK_TSAN (scripts/sanitizers.sh
// passes it with --sanitize=thread), where the sanitizer's runtime defines them. Nothing is
// linked for them otherwise. (The C importer does not see -sanitize=thread, so `__has_feature`
// cannot choose here.)
#ifndef NETWORK_CTHREADSANITIZER_SHIM_H
#define NETWORK_CTHREADSANITIZER_SHIM_H

/// Tells ThreadSanitizer that the caller now sees everything released at `addr` before.
void __tsan_acquire(void *addr);

/// Tells ThreadSanitizer that whoever acquires `addr` next sees everything the caller did so far.
void __tsan_release(void *addr);

#endif
