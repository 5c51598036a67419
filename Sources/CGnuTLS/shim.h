// GnuTLS, for DTLS (and later QUIC crypto). Debian: libgnutls28-dev.
#include <gnutls/gnutls.h>
#include <gnutls/dtls.h>
#include <gnutls/x509.h>
#include <gnutls/crypto.h>
