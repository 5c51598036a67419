#ifndef C_NETWORK_SYSTEM_H
#define C_NETWORK_SYSTEM_H

// Glibc declares `sendmmsg` and `struct mmsghdr` only under _GNU_SOURCE, which Swift's Glibc
// module is built without. This header includes no system header (one included here would be
// a second copy of Glibc's declarations, hiding them from Swift): the wrapper takes the
// datagrams as an array of `struct iovec`.

/// The most datagrams one `cns_send_datagrams` call sends.
#define CNS_DATAGRAMS_PER_CALL 256

/// Sends up to `CNS_DATAGRAMS_PER_CALL` datagrams on a connected socket with one `sendmmsg(2)`,
/// datagram `i` being `vectors[i]` (a `struct iovec`). Returns how many were sent, or -1 with
/// `errno` set.
int cns_send_datagrams(int sockfd, const void *vectors, unsigned int count, int flags);

#endif
