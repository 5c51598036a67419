#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "CNetworkSystem.h"

int cns_send_datagrams(int sockfd, const void *vectors, unsigned int count, int flags) {
    struct mmsghdr messages[CNS_DATAGRAMS_PER_CALL];
    const struct iovec *iov = vectors;
    if (count > CNS_DATAGRAMS_PER_CALL) count = CNS_DATAGRAMS_PER_CALL;
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned int i = 0; i < count; i++) {
        messages[i].msg_hdr.msg_iov = (struct iovec *)&iov[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
    return sendmmsg(sockfd, messages, count, flags);
}
