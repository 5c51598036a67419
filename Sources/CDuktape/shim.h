// Duktape, the embedded JavaScript engine that evaluates PAC files. Debian: duktape-dev.
#include <duktape.h>
