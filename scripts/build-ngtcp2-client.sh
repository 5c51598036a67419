#!/usr/bin/env bash
# Builds ngtcp2's own GnuTLS example client (examples/gtlssimpleclient.c, MIT) from Debian's
# source package of the installed ngtcp2, as a QUIC client nobody here wrote for the interop
# tests (issue 15; PEERS.md §7):
#   bash scripts/build-ngtcp2-client.sh [OUT]      (default /usr/local/bin/ngtcp2-echo-client)
# Run it as:  NGTCP2_HOST=127.0.0.1 NGTCP2_PORT=4433 ngtcp2-echo-client
# It offers ALPN "echo", opens one bidirectional stream, sends "hello from ngtcp2" with FIN,
# prints "HANDSHAKE COMPLETED" (stderr) and "stream ID echo: …" (stdout) for what comes back, and
# exits 0 at the echo's FIN. The example does not verify the server's certificate.
# Idempotent: an existing OUT is kept. Needs deb-src (added for deb.debian.org if absent), apt,
# libev-dev and a C compiler; install-deps.sh calls it after installing those.
set -euo pipefail
OUT=$(realpath -m "${1:-/usr/local/bin/ngtcp2-echo-client}")
[ -x "$OUT" ] && exit 0
SUDO=()
[ "$(id -u)" -eq 0 ] || ! command -v sudo >/dev/null 2>&1 || SUDO=(sudo)
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  . /etc/os-release
  case "${ID:-}" in
    debian)
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$VERSION_CODENAME" "$VERSION_CODENAME" | "${SUDO[@]}" tee /etc/apt/sources.list.d/ngtcp2-src.sources >/dev/null ;;
    *)
      # Ubuntu: the same suites as the binary packages, as deb-src lines.
      grep -h '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed 's/^deb /deb-src /' \
        | "${SUDO[@]}" tee /etc/apt/sources.list.d/ngtcp2-src.list >/dev/null ;;
  esac
  "${SUDO[@]}" apt-get update -qq
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# (apt warns when its sandbox user cannot write here; the download is still checked.)
apt-get source --download-only ngtcp2 >/dev/null 2>&1 || { echo "build-ngtcp2-client: apt-get source ngtcp2 failed" >&2; exit 1; }
tar xJf ngtcp2_*.orig.tar.* --wildcards '*/examples/gtlssimpleclient.c'
SOURCE=$(echo ngtcp2-*/examples/gtlssimpleclient.c)
# Host and port from the environment at run time; our ALPN and message; callbacks that report
# the handshake and print the echo; the library's debug log off.
sed -i -e 's|^#define REMOTE_HOST .*|#define REMOTE_HOST (getenv("NGTCP2_HOST") ? getenv("NGTCP2_HOST") : "127.0.0.1")|' \
       -e 's|^#define REMOTE_PORT .*|#define REMOTE_PORT (getenv("NGTCP2_PORT") ? getenv("NGTCP2_PORT") : "4433")|' \
       -e 's|^#define ALPN .*|#define ALPN "echo"|' \
       -e 's|^#define MESSAGE .*|#define MESSAGE "hello from ngtcp2"|' \
       -e 's|NULL, /\* handshake_completed \*/|echo_handshake_completed,|' \
       -e 's|NULL, /\* recv_stream_data \*/|echo_recv_stream_data,|' \
       -e 's|settings.log_printf = log_printf;|(void)log_printf;|' "$SOURCE"
grep -q echo_recv_stream_data "$SOURCE" || { echo "build-ngtcp2-client: the example's layout changed" >&2; exit 1; }
cat > callbacks.h <<'C'
static int echo_handshake_completed(ngtcp2_conn *conn, void *user_data) {
  (void)conn; (void)user_data;
  fprintf(stderr, "HANDSHAKE COMPLETED\n");
  return 0;
}
static int echo_recv_stream_data(ngtcp2_conn *conn, uint32_t flags, int64_t stream_id, uint64_t offset,
                                 const uint8_t *data, size_t datalen, void *user_data, void *stream_user_data) {
  (void)conn; (void)offset; (void)user_data; (void)stream_user_data;
  printf("stream %lld echo: %.*s\n", (long long)stream_id, (int)datalen, (const char *)data);
  fflush(stdout);
  if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) exit(0);
  return 0;
}
C
# The callbacks go right before client_quic_init(), which names them.
sed -i '/^static int client_quic_init(/e cat callbacks.h' "$SOURCE"
CC=$(command -v cc || command -v gcc || command -v clang)
"$CC" -O1 -o client "$SOURCE" $(pkg-config --cflags --libs libngtcp2 libngtcp2_crypto_gnutls gnutls) -lev
"${SUDO[@]}" install -D -m 755 client "$OUT"
echo "build-ngtcp2-client: built $OUT"
