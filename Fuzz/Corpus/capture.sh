#!/usr/bin/env bash
# Captures the seed corpora in this directory from the real peers the interop tests use
# (dnsmasq, dante, tinyproxy, pactester, openssl and gnutls-cli DTLS clients), all on
# 127.0.0.1. Needs what scripts/install-deps.sh installs. Rerun it after changing a peer's
# setup; the files are then reviewed and committed like any other change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_tcp() { for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# A TCP echo server the proxies tunnel to.
echo_port=$(port)
python3 -c '
import socket, sys, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen()
def echo(c):
    while (d := c.recv(65536)): c.sendall(d)
    c.close()
while True: threading.Thread(target=echo, args=(l.accept()[0],), daemon=True).start()
' "$echo_port" &
pids+=($!)
wait_tcp "$echo_port"

# dnsmasq, as Tests/PeerSupport/Dnsmasq.swift starts it, with records of every type it serves.
dns_port=$(port)
dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --user=root --pid-file= --log-facility=/dev/null \
    --listen-address=127.0.0.1 --port="$dns_port" --bind-interfaces --local=/test/ \
    --host-record=dual.test,10.77.0.2,fd77::2,30 --cname=alias.test,dual.test \
    --srv-host=_nw._tcp.test,dual.test,4242,1,5 --txt-record=txt.test,"v=1","second string" \
    --mx-host=dual.test,mail.test,10 --ptr-record=2.0.77.10.in-addr.arpa,dual.test \
    --host-record=many.test,10.77.0.3 --host-record=many.test,10.77.0.4 --host-record=many.test,10.77.0.5 &
pids+=($!)
wait_tcp "$dns_port"
rm -rf dns-message dns-stream
python3 capture.py dns "$dns_port" "$work/dns"
mkdir -p dns-message dns-stream
mv "$work"/dns/udp-* dns-message/
mv "$work"/dns/tcp-* dns-stream/

# dante without and with user/password authentication (Tests/PeerSupport/Dante.swift).
rm -rf socks5-reply
for auth in none username; do
    socks_port=$(port)
    cat > "$work/danted-$auth.conf" <<CONF
logoutput: $work/danted-$auth.log
internal: 127.0.0.1 port = $socks_port
external: 127.0.0.1
clientmethod: none
socksmethod: $auth
user.privileged: root
user.unprivileged: nobody
client pass {
  from: 0/0 to: 0/0
}
socks pass {
  from: 0/0 to: 0/0
  command: connect
}
CONF
    danted -f "$work/danted-$auth.conf" -p "$work/danted-$auth.pid" &
    pids+=($!)
    wait_tcp "$socks_port"
    if [ "$auth" = none ]; then
        python3 capture.py socks5 "$socks_port" socks5-reply "$echo_port"
    else
        python3 capture.py socks5auth "$socks_port" socks5-reply
    fi
done

# tinyproxy, open and with Basic authentication (Tests/PeerSupport/Tinyproxy.swift).
rm -rf http-connect-reply
for auth in open basic; do
    http_port=$(port)
    printf 'Port %s\nListen 127.0.0.1\nTimeout 30\nLogLevel Critical\nLogFile "%s"\nAllow 127.0.0.1\nDisableViaHeader Yes\n' \
        "$http_port" "$work/tinyproxy-$auth.log" > "$work/tinyproxy-$auth.conf"
    [ "$auth" = basic ] && echo "BasicAuth user secret" >> "$work/tinyproxy-$auth.conf"
    tinyproxy -d -c "$work/tinyproxy-$auth.conf" &
    pids+=($!)
    wait_tcp "$http_port"
    if [ "$auth" = open ]; then
        python3 capture.py http "$http_port" http-connect-reply
        python3 capture.py http "$http_port" "$work/http-open" "$echo_port"
        mv "$work/http-open/connect-echo" http-connect-reply/connect-echo
    else
        python3 capture.py http "$http_port" "$work/http-basic" "$echo_port"
        mv "$work/http-basic/connect-bad-credential" http-connect-reply/connect-bad-credential
    fi
done

# PAC answers: what pactester (libpacparser) returns for the anchor tests' kind of scripts.
rm -rf pac-result
mkdir -p pac-result
cat > "$work/smoke.pac" <<'PAC'
function FindProxyForURL(url, host) {
  if (isPlainHostName(host) || dnsDomainIs(host, ".internal.test")) return "DIRECT";
  if (shExpMatch(url, "https://secure.*")) return "HTTPS 127.0.0.1:8443";
  if (isInNet(host, "127.0.0.0", "255.0.0.0")) return "SOCKS5 127.0.0.1:1080";
  if (dnsDomainIs(host, ".v6.test")) return "PROXY [2001:db8::ff]:3128; SOCKS 10.0.0.1; SOCKS4 10.0.0.4:1080";
  if (dnsDomainIs(host, ".sloppy.test")) return " proxy\tp.test:3128;;DIRECT ; HTTP h.test ;";
  return "PROXY 127.0.0.1:3128; DIRECT";
}
PAC
n=0
for url in http://intranet/ https://secure.example.test/ http://127.0.0.1:8080/ http://a.v6.test/ \
    http://b.sloppy.test/ http://example.test/; do
    n=$((n + 1))
    pactester -p "$work/smoke.pac" -u "$url" -c 10.20.30.40 | tr -d '\n' > "pac-result/pactester-$n"
done

# DTLS ClientHellos: the first datagram of openssl's and GnuTLS's clients.
rm -rf dtls-cookie
mkdir -p dtls-cookie
client() { # NAME COMMAND...
    local name=$1; shift
    local dtls_port; dtls_port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    python3 capture.py dtls "$dtls_port" dtls-cookie "$name" &
    local listener=$!
    # The listener must be bound before the client sends (a closed port makes it give up).
    while ! grep -q ":$(printf '%04X' "$dtls_port") " /proc/net/udp; do sleep 0.05; done
    timeout 3 "$@" "$dtls_port" < /dev/null > /dev/null 2>&1 || true
    wait "$listener"
}
client openssl-dtls12 bash -c 'openssl s_client -dtls1_2 -connect 127.0.0.1:$0'
client openssl-dtls12-mtu bash -c 'openssl s_client -dtls1_2 -mtu 256 -no_ticket -connect 127.0.0.1:$0'
client gnutls-dtls12 bash -c 'gnutls-cli --udp --insecure --priority NORMAL:-VERS-ALL:+VERS-DTLS1.2 -p $0 127.0.0.1'

ls -l dns-message dns-stream socks5-reply http-connect-reply pac-result dtls-cookie | grep -c '^-' | xargs echo "captured files:"
