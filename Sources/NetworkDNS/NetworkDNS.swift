// NetworkDNS: DNS wire codec, unicast resolver with cache, later mDNS / DNS-SD (ARCHITECTURE.md).
// No NW types here; NetworkCore bridges.
