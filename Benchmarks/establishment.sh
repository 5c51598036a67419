#!/usr/bin/env bash
# Time to ready: nwcat (this package, release build) against curl, both run in the same client
# network namespace against the same peers in a server namespace, for
#   clean      a dual-stack name, nothing blocked
#   blackhole  the same name with IPv6 silently dropped by nftables (Happy Eyeballs falls back)
#   socks5     through dante (SOCKS5, no auth; the proxy resolves the name)
#   connect    through tinyproxy (HTTP CONNECT, Basic auth)
# and writes the section "Establishment: time to ready vs curl" of Benchmarks/RESULTS.md (the
# other sections are left as they are) plus the raw samples in Benchmarks/establishment.json.
#
# Knobs (environment): N (iterations per scenario and client, default 20).
# Needs root, iproute2, nftables, dnsmasq-base, dante-server, tinyproxy, curl, python3
# (scripts/install-deps.sh installs them). Takes about a minute after the build.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
COMMAND="bash Benchmarks/establishment.sh"
if [ -n "${N+x}" ]; then COMMAND="N=$N $COMMAND"; fi
N="${N:-20}"

log() { printf '==> %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)" >&2; exit 1; }
for tool in ip nft dnsmasq danted tinyproxy curl python3 sysctl; do
    command -v "$tool" >/dev/null || { echo "missing tool: $tool (run scripts/install-deps.sh)" >&2; exit 1; }
done

log "building nwcat (release)"
if ! (cd "$ROOT" && swift build -c release --product nwcat > "${TMPDIR:-/tmp}/establishment-build.log" 2>&1); then
    grep -E "error" "${TMPDIR:-/tmp}/establishment-build.log" >&2 || tail -20 "${TMPDIR:-/tmp}/establishment-build.log" >&2
    exit 1
fi
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)"
NWCAT="$BIN/nwcat"
[ -x "$NWCAT" ] || { echo "release build of nwcat failed" >&2; exit 1; }

# Names carry our pid, as the tests' namespaces do, so runs never collide.
C="nwbc$$"; S="nwbs$$"
W="$(mktemp -d)"; chmod 755 "$W"
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    ip netns del "$C" 2>/dev/null || true
    ip netns del "$S" 2>/dev/null || true
    rm -rf "/etc/netns/$C" "/etc/netns/$S" "$W"
}
trap cleanup EXIT

log "namespaces $C (client) and $S (server)"
CV4=10.79.0.1; SV4=10.79.0.2; CV6=2001:db8:79::1; SV6=2001:db8:79::2
ip netns add "$C"; ip netns add "$S"
for n in "$C" "$S"; do
    ip -n "$n" link set lo up
    # No DAD: new addresses are usable at once.
    ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
done
ip link add "${C}a" netns "$C" type veth peer name "${S}b" netns "$S"
ip -n "$C" addr add "$CV4/24" dev "${C}a"; ip -n "$C" -6 addr add "$CV6/64" dev "${C}a" nodad
ip -n "$S" addr add "$SV4/24" dev "${S}b"; ip -n "$S" -6 addr add "$SV6/64" dev "${S}b" nodad
ip -n "$C" link set "${C}a" up; ip -n "$S" link set "${S}b" up
# Permanent neighbour entries: the first IPv6 neighbour solicitation on a fresh veth goes
# unanswered, which would cost the first connection a one-second SYN retransmission.
mac() { ip -n "$1" -o link show dev "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }
CMAC="$(mac "$C" "${C}a")"; SMAC="$(mac "$S" "${S}b")"
for a in "$SV4" "$SV6"; do ip -n "$C" neigh replace "$a" lladdr "$SMAC" dev "${C}a" nud permanent; done
for a in "$CV4" "$CV6"; do ip -n "$S" neigh replace "$a" lladdr "$CMAC" dev "${S}b" nud permanent; done
for n in "$C" "$S"; do
    mkdir -p "/etc/netns/$n"
    printf 'nameserver %s\nsearch test\noptions timeout:2 attempts:1\n' "$SV4" > "/etc/netns/$n/resolv.conf"
    printf '127.0.0.1 localhost\n' > "/etc/netns/$n/hosts"
    printf 'hosts: files dns\n' > "/etc/netns/$n/nsswitch.conf"
done

start() { "$@" >>"$W/daemons.log" 2>&1 & PIDS+=($!); }
wait_tcp() {   # namespace port
    for _ in $(seq 200); do
        ip netns exec "$1" sh -c "cat /proc/net/tcp /proc/net/tcp6" | awk -v p="$(printf ':%04X' "$2")" '$2 ~ p"$" && $4 == "0A" {f=1} END {exit !f}' && return 0
        sleep 0.05
    done
    echo "nothing listens on port $2 in $1" >&2; return 1
}

start ip netns exec "$S" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --user=root --pid-file= \
    --listen-address="$SV4" --bind-interfaces --local=/test/ --no-negcache --log-facility=/dev/null \
    --host-record="dual.test,$SV4,$SV6,30"
start ip netns exec "$S" python3 -c '
import http.server, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok\n"; self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
class S(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); super().server_bind()
S(("::", 8080), H).serve_forever()'
cat > "$W/danted.conf" <<EOF
logoutput: $W/danted.log
internal: $SV4 port = 1080
external: ${S}b
clientmethod: none
socksmethod: none
user.privileged: root
user.unprivileged: nobody
client pass {
  from: 0/0 to: 0/0
  log: error
}
socks pass {
  from: 0/0 to: 0/0
  command: connect
  log: error
}
EOF
start ip netns exec "$S" danted -f "$W/danted.conf" -p "$W/danted.pid"
cat > "$W/tinyproxy.conf" <<EOF
Port 8888
Listen $SV4
Timeout 30
LogLevel Error
Allow 10.79.0.0/24
DisableViaHeader Yes
BasicAuth benchuser b3nch
EOF
start ip netns exec "$S" tinyproxy -d -c "$W/tinyproxy.conf"
wait_tcp "$S" 8080; wait_tcp "$S" 1080; wait_tcp "$S" 8888
for _ in $(seq 100); do
    ip netns exec "$S" sh -c 'cat /proc/net/udp' | grep -q ":0035 " && break; sleep 0.05
done

log "measuring, $N iterations per scenario and client"
python3 "$HERE/scripts/establishment.py" --nwcat "$NWCAT" --client "$C" --server "$S" --server-ipv4 "$SV4" \
    --server-ipv6 "$SV6" --iterations "$N" --command "$COMMAND" --revision "$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --results "$HERE/RESULTS.md" --json "$HERE/establishment.json"
log "wrote the Establishment section of Benchmarks/RESULTS.md and Benchmarks/establishment.json"
