#!/usr/bin/env bash
# Profiles one client x scenario with perf, pinned like run.sh (server and client on CPU 0).
#   bash Benchmarks/scripts/profile.sh nw rr1        # cpu-clock profile: by DSO, self, inclusive
#   bash Benchmarks/scripts/profile.sh nio udp64-batch
#   bash Benchmarks/scripts/profile.sh nw mem        # live heap per connection by allocation site
#   bash Benchmarks/scripts/profile.sh nw tls-bulk   # TLS: against C/tls_server with a fresh cert
#   bash Benchmarks/scripts/profile.sh c tls-handshake   # c = the C OpenSSL client (TLS only)
# Scenarios: rr1 rr100 bulk udp64-single udp64-batch mem tls-bulk tls-handshake framed ws. With STAT=1, TLS
# scenarios also print `perf stat` (context switches, syscalls) for the client process. Needs perf (apt-get install linux-perf)
# and a previous `bash Benchmarks/run.sh` (or the same builds). Output goes to stdout; the perf
# data stays in /tmp/netbench-profile.*.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
impl="${1:?nw|nio|c}"; scenario="${2:?scenario}"; PORT="${PORT:-19000}"
bin="$HERE/.build/release/$impl-bench"
case "$scenario" in
    rr1) args=(rr --conns 1 --duration 3 --warmup 0.3) ;;
    rr100) args=(rr --conns 100 --nports 10 --duration 3 --warmup 0.3) ;;
    bulk) args=(bulk --size 65536 --duration 3) ;;
    udp64-single) args=(udp --size 64 --batch 64 --batched 0 --duration 3 --warmup 0.3) ;;
    udp64-batch) args=(udp --size 64 --batch 64 --batched 1 --duration 3 --warmup 0.3) ;;
    mem) args=(mem --conns 2000 --nports 10) ;;
    tls-bulk) args=(tls-bulk --size 65536 --duration 3) ;;
    tls-handshake) args=(tls-handshake --duration 3 --warmup 0.3) ;;
    framed) args=(framed --size 64 --window 16 --batched 1 --duration 3 --warmup 0.3) ;;
    ws) args=(ws --size 64 --window 16 --duration 3 --warmup 0.3) ;;
    *) echo "unknown scenario $scenario" >&2; exit 1 ;;
esac
# API=async profiles the 2025 API's client (NetworkConnection; NIO: NIOAsyncChannel) where it has one.
[ -n "${API:-}" ] && args+=(--api "$API")
if [ "$impl" = c ]; then
    bin="$HERE/.build/c/tls_client"
    args[0]="${args[0]#tls-}"
fi
case "$scenario" in
tls-*)
    certdir="$(mktemp -d /tmp/netbench-tls.XXXXXX)"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$certdir/key.pem" \
        -out "$certdir/cert.pem" -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        >/dev/null 2>&1
    taskset -c 0 "$HERE/.build/c/tls_server" --port "$PORT" --cert "$certdir/cert.pem" --key "$certdir/key.pem" >/dev/null 2>&1 &
    server=$!
    trap 'kill $server 2>/dev/null || true; rm -rf "$certdir"' EXIT
    ;;
ws)
    taskset -c 0 "$HERE/.build/release/nio-bench" ws-server --port "$PORT" >/dev/null 2>&1 &
    server=$!
    trap 'kill $server 2>/dev/null || true' EXIT
    ;;
*)
    taskset -c 0 "$HERE/.build/c/server" --port "$PORT" --nports 10 >/dev/null 2>&1 &
    server=$!
    trap 'kill $server 2>/dev/null || true' EXIT
    ;;
esac
sleep 0.3
if [ "${STAT:-0}" = 1 ]; then
    echo "== perf stat (client process)"
    taskset -c 0 perf stat -e task-clock,context-switches,cpu-migrations,raw_syscalls:sys_enter \
        "$bin" "${args[@]}" --port "$PORT" 2>&1 | grep -vE '^$|Performance counter'
fi
data="/tmp/netbench-profile.$impl.$scenario.data"
if [ "$scenario" = mem ]; then
    libc="$(ldd "$bin" | awk '/libc.so.6/{print $3}')"
    perf probe -q -d 'probe_libc:*' 2>/dev/null || true
    perf probe -q -x "$libc" -a 'malloc size=%di:u64' -a 'malloc_ret=malloc%return $retval' -a 'free ptr=%di:u64'
    taskset -c 0 perf record -q -e probe_libc:malloc -e probe_libc:malloc_ret__return -e probe_libc:free -g \
        -o "$data" "$bin" "${args[@]}" --port "$PORT"
    perf probe -q -d 'probe_libc:*'
    python3 "$HERE/scripts/heap_live.py" "$data" 2000 2>/dev/null | swift demangle --simplified | cut -c1-260
    exit 0
fi
taskset -c 0 perf record -q -e cpu-clock -F 4999 -g -o "$data" "$bin" "${args[@]}" --port "$PORT"
echo "== by shared object"
perf report -i "$data" --no-children --sort dso -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -10
echo "== self time, top symbols"
perf report -i "$data" --no-children --sort sym -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30 | swift demangle --simplified | cut -c1-200
echo "== inclusive time, this package's and the client's frames"
perf report -i "$data" --children --sort sym -g none 2>/dev/null | grep -v '^#' | grep -v '^$' \
    | grep -E 'Network|NWClients|NIOClients|NIOSSL|Dispatch|dispatch_' | head -30 | swift demangle --simplified | cut -c1-200
