// Duktape, the embedded JavaScript engine that evaluates PAC files. Debian: duktape-dev.
#if __has_include(<duktape.h>)
#include <duktape.h>
#else
#error "duktape.h not found. The Network package needs Debian/Ubuntu's duktape-dev (PAC files); install the system packages it needs with: apt-get install pkg-config libgnutls28-dev duktape-dev libngtcp2-dev libngtcp2-crypto-gnutls-dev"
#endif
