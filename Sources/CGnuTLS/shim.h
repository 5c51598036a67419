// GnuTLS, for DTLS (and later QUIC crypto). Debian: libgnutls28-dev.
#if __has_include(<gnutls/gnutls.h>)
#include <gnutls/gnutls.h>
#include <gnutls/dtls.h>
#include <gnutls/x509.h>
#include <gnutls/crypto.h>
#else
#error "gnutls/gnutls.h not found. The Network package needs Debian/Ubuntu's libgnutls28-dev (DTLS); install the system packages it needs with: apt-get install pkg-config libgnutls28-dev duktape-dev libngtcp2-dev libngtcp2-crypto-gnutls-dev"
#endif
