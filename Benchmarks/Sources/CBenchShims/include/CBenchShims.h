#ifndef CBENCHSHIMS_H
#define CBENCHSHIMS_H
#include <stddef.h>
/// Bytes in use by malloc (all arenas plus mmapped chunks), from glibc's mallinfo2(); 0 elsewhere.
size_t cbench_heap_in_use(void);
#endif
