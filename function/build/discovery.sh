# Runs the AIM image's dry-run ("$@" is its entrypoint followed by `dry-run --format=json`) and
# hands the JSON result back through the container's termination message, which Kubernetes
# keeps in the Pod's status: a composition function can read that, but not logs.
#
# A termination message holds at most AIM_TERMINATION_LIMIT bytes (Kubernetes: 4096). A larger
# result is cut down to its first profile, the only one AIM uses (when the image has python3);
# if even that does not fit, the message says how large the result was, so the template reports
# it instead of a truncated, unparseable JSON. On failure the message stays empty and Kubernetes
# falls back to the end of the log (terminationMessagePolicy: FallbackToLogsOnError).
set -u
dir=${AIM_DISCOVERY_DIR:-/aim-discovery}
log=${AIM_TERMINATION_LOG:-/dev/termination-log}
limit=${AIM_TERMINATION_LIMIT:-4096}
out="$dir/result.json"
"$@" >"$out"
code=$?
cat "$out"
[ "$code" -eq 0 ] || exit "$code"
size=$(wc -c <"$out")
if [ "$size" -gt "$limit" ] && command -v python3 >/dev/null 2>&1; then
  python3 - "$out" >"$dir/first.json" <<'PY' && mv "$dir/first.json" "$out"
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
start = text.index("[")
profiles, _ = json.JSONDecoder().raw_decode(text[start:])
print(json.dumps(profiles[:1], separators=(",", ":")), end="")
PY
  size=$(wc -c <"$out")
fi
if [ "$size" -gt "$limit" ]; then
  printf '{"aimDiscoveryOutputBytes": %s, "limit": %s}' "$size" "$limit" >"$log"
else
  cat "$out" >"$log"
fi
