#!/usr/bin/env bash
# The secrets check: runs the TLS, DTLS, proxy and PAC suites with the engine logging at
# trace level into one file (NETWORK_LOG=trace NETWORK_LOG_FILE=..., see docs/logging.md), then
# searches that log for the secrets those tests use: proxy passwords and their Basic-auth
# encodings, pre-shared keys (hex and raw bytes), private keys (PEM markers and bodies), PAC
# script text, and the payloads the tests send. It also fails when the log is empty or lacks
# the non-secret lines it must have (so it cannot pass by logging nothing), and checks itself
# on a planted leak. Needs a finished `swift build --build-tests`.
#
# Prints one PASS/FAIL line per check and finally `log-secrets: N passed, M failed`; exits
# non-zero when anything failed. KEEP_LOG=1 keeps the captured log and prints its path.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

LOG="$(mktemp /tmp/log-secrets.XXXXXX)"
TEST_OUTPUT="$(mktemp /tmp/log-secrets-tests.XXXXXX)"
cleanup() {
    if [ "${KEEP_LOG:-0}" = "1" ]; then echo "log kept: $LOG (test output: $TEST_OUTPUT)"; else rm -f "$LOG" "$TEST_OUTPUT"; fi
}
trap cleanup EXIT

# The suites whose tests hold secrets (type names: `swift test --filter` matches those).
FILTER='TLSInteropTests|DTLSInteropTests|DTLSSessionTests|TLSVerificationErrorTests|NWCatTLSTests|SecTrustVerifyBlockTests|TinyproxyTests|DanteProxyTests|HostileProxyTests|ProxyConnectionTests|PAC'

echo "==> swift test --skip-build --filter '$FILTER' with NETWORK_LOG=trace"
NETWORK_LOG=trace NETWORK_LOG_FILE="$LOG" swift test --skip-build --filter "$FILTER" >"$TEST_OUTPUT" 2>&1
TEST_STATUS=$?
tail -n 3 "$TEST_OUTPUT"

python3 - "$LOG" "$TEST_STATUS" <<'PYTHON'
import base64, re, sys

log_path, test_status = sys.argv[1], int(sys.argv[2])
data = open(log_path, "rb").read()
text = data.decode("utf-8", "replace")
passed = failed = 0

def check(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))

def b64(s):
    return base64.b64encode(s.encode()).decode()

# Secrets as literal strings (credentials the proxy tests use, their Basic encodings, PSKs in
# hex, headers that carry credentials, PEM markers, PAC script text, the payloads sent).
tls_psk = bytes(range(32))
dtls_psk = bytes(((i * 7 + 3) & 0xFF) for i in range(32))
literals = {
    "tinyproxy password": "s3cret",
    "tinyproxy wrong password": "proxyuser:nope",
    "end-to-end password": "e2e-s3cret",
    "bridging passwords": "wonderland",
    "bridging password 2": "hunter2",
    "RFC 7617 example password": "open sesame",
    "Basic auth (tinyproxy)": b64("proxyuser:s3cret"),
    "Basic auth (wrong password)": b64("proxyuser:nope"),
    "Basic auth (RFC example)": b64("Aladdin:open sesame"),
    "Proxy-Authorization header": "Proxy-Authorization",
    "Basic credentials": "Basic ",
    "TLS PSK (hex)": tls_psk.hex(),
    "DTLS PSK (hex)": dtls_psk.hex(),
    "private key PEM marker": "PRIVATE KEY",
    "PEM marker": "-----BEGIN",
    "PAC script text": "function FindProxyForURL",
    "PAC script return": 'return "PROXY',
    "payload: psk hello": "psk hello",
    "payload: psk to our listener": "psk to our listener",
    "payload: peer to peer": "peer to peer",
    "payload: through the proxy": "through the proxy",
    "payload: secret line": "secret line",
    "payload: inner secret": "inner secret",
    "payload: through an https proxy": "through an https proxy",
    "payload: through dante": "through dante with a password",
    "payload: authorised": "authorised",
    "payload: from network": "from network",
    "payload: still here": "still here",
    "payload: mtls": "mtls\n",
}
patterns = {
    # Dante's throwaway account password is random per run: "pw-" and base 36.
    "dante password": r"pw-[0-9a-z]{4,}",
    # A PEM body (or any DER in base64): long unbroken base64 runs.
    "base64 block (key or certificate body)": r"[A-Za-z0-9+/]{64,}={0,2}",
}
raw = {"TLS PSK (raw bytes)": tls_psk, "DTLS PSK (raw bytes)": dtls_psk}

def leaks(body_text, body_bytes):
    found = []
    for name, secret in literals.items():
        if secret in body_text:
            found.append(name)
    for name, pattern in patterns.items():
        if re.search(pattern, body_text):
            found.append(name)
    for name, secret in raw.items():
        if secret in body_bytes:
            found.append(name)
    return found

# The checker must see a planted leak of each kind, or a clean result means nothing.
samples = dict(literals)
samples.update({"dante password": "pw-abc123x", "base64 block (key or certificate body)": "MII" + "A" * 70})
for name, secret in samples.items():
    planted = text + f"\nplanted {secret}\n"
    check(name in leaks(planted, planted.encode()), f"self-test: a planted {name} is detected")
for name, secret in raw.items():
    check(name in leaks(text, data + secret), f"self-test: planted {name} is detected")

check(test_status == 0, "the TLS, proxy and PAC suites pass with logging at trace", f"swift test exited {test_status}")
lines = text.splitlines()
check(len(lines) >= 100, "the captured log is not empty", f"{len(lines)} lines")

expected = {
    "connection stories": r" network\.connection\[[0-9]+\]: .*connection=C[0-9]+.* state ready",
    "attempts": r" network\.establishment\[[0-9]+\]: .* attempt [0-9]+ to ",
    "listeners": r" network\.listener\[[0-9]+\]: .*listener=L[0-9]+",
    "TLS handshakes with version": r" network\.tls\[[0-9]+\]: .*tls_version=TLS1\.[23].* handshake complete",
    "a cipher suite (GnuTLS)": r" network\.tls\[[0-9]+\]: .*cipher_suite=0x[0-9A-F]{4}",
    "a refused certificate": r" network\.tls\[[0-9]+\]: .*handshake failed: tls -98",
    "proxy tunnels": r" network\.proxy\[[0-9]+\]: .* tunnel to .* is up",
    "a proxy refusal": r" network\.proxy\[[0-9]+\]: .* failed: ",
    "PAC answers": r" network\.pac\[[0-9]+\]: .* for host [^ ]+: (DIRECT|PROXY|HTTPS|SOCKS)",
    "PAC scripts loaded": r" network\.pac\[[0-9]+\]: loaded .*: [0-9]+ bytes",
    "DNS answers with source and TTL": r" network\.dns\[[0-9]+\]: .*source=[a-zA-Z]+ ttl=[0-9]+",
    "waiting connections and why": r" network\.connection\[[0-9]+\]: .*error=posix [0-9]+ .*state waiting",
    "trace byte counts": r" trace network\.connection\[[0-9]+\]: .* (send|received) [0-9]+ bytes",
}
for name, pattern in expected.items():
    check(re.search(pattern, text) is not None, f"the log has {name}", pattern)

found = leaks(text, data)
for name in list(literals) + list(patterns) + list(raw):
    hit = name in found
    where = ""
    if hit and name in literals:
        where = next((l for l in lines if literals[name] in l), "")[:200]
    elif hit and name in patterns:
        m = re.search(patterns[name], text)
        where = next((l for l in lines if m.group(0) in l), "")[:200]
    check(not hit, f"no {name} in the log", where)

print(f"log-secrets: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PYTHON
