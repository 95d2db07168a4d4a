#!/bin/sh
# tests/templates/python-data.sh - the python-data template on the local
# provider (TAP)
#
# `polysandbox templates` says whether it is usable (its libraries named
# by requires), and unusable, naming the path, when one is missing.
# Where it is usable, a program made with pandas and numpy draws a plot
# with matplotlib (the Agg backend, its configuration in the sandbox's
# /tmp) and saves it with savefig under outputs/plots/: run --json brings
# it back as a PNG (MIME image/png, PNG magic) and --artifacts DIR saves
# it as DIR/plots/squares.png.  Skipped, with the reason `templates`
# gives, where numpy, pandas or matplotlib is not on the host.
. "$top_srcdir/tests/cli/lib.sh"

if [ ! -e "$top_builddir/plugins/local/.libs/local.so" ]; then
    echo "1..0 # SKIP the local provider is not built"
    exit 0
fi

plan 5

# A copy of the configuration with python-data requiring a path that no
# host has, as python-nope.
cfg_copy || exit 99
sed -e 's/^extensions = .pydata/extensions = .pynope/' \
    -e 's|^requires = .*|requires = /usr /polysandbox-no-such-dir/matplotlib|' \
    "$tmp/cfg/templates.d/python-data.ini" >"$tmp/cfg/templates.d/python-nope.ini" || exit 99

cli --config-dir "$tmp/cfg" templates --json
cp "$tmp/out" "$tmp/templates.json"
why=$(python3 - "$tmp/templates.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1])):
    if t["name"] == "python-data" and not t["providers"]["local"]["usable"]:
        print(t["providers"]["local"]["reason"])
PY
)
check "templates --json: python-data, its artifacts directory, usable on local or why not" \
    json_check '([(t["artifacts"], l["reason"].startswith("runs the host") and
                   l["reason"].endswith(" python3") if l["usable"] else
                   l["reason"].endswith(" is not on the host (requires)"))
                  for t in j if t["name"] == "python-data" for l in [t["providers"]["local"]]] ==
                 [("outputs", True)])'
check "templates --json: a path of requires missing makes it unusable, the path named" \
    json_check '([t["providers"]["local"] for t in j if t["name"] == "python-nope"] ==
                 [{"usable": False, "reason": "/polysandbox-no-such-dir/matplotlib is not on the host (requires)"}])'

if [ -n "$why" ]; then
    ok "run --json: the plot comes back as a PNG # SKIP $why"
    ok "run --json: matplotlib's Agg backend, pandas and numpy ran # SKIP $why"
    ok "run --artifacts DIR: DIR/plots/squares.png is the PNG # SKIP $why"
    done_testing
fi

cat >"$tmp/plot.py" <<'PY'
import os
import numpy as np
import pandas as pd
import matplotlib
import matplotlib.pyplot as plt

os.makedirs("outputs/plots", exist_ok=True)
df = pd.DataFrame({"x": np.arange(5), "y": np.arange(5) ** 2})
ax = df.plot(x="x", y="y")
ax.figure.savefig("outputs/plots/squares.png")
print(matplotlib.get_backend().lower(), int(df["y"].sum()))
PY
cli run --json -t 120s --lang python-data --artifacts "$tmp/saved" "$tmp/plot.py"
check "run --json: the plot comes back as a PNG" \
    json_check '([(a["path"], a["mime"], base64.b64decode(a["base64"])[:8]) for a in j["artifacts"]] ==
                 [("plots/squares.png", "image/png", b"\x89PNG\r\n\x1a\n")] and
                 j["artifacts_left_out"] == [])'
check "run --json: matplotlib's Agg backend, pandas and numpy ran" \
    json_check 'j["status"] == "ok" and j["stdout"] == "agg 30\n"'
check "run --artifacts DIR: DIR/plots/squares.png is the PNG" \
    eval 'is_rc 0 && [ "$(head -c 8 "$tmp/saved/plots/squares.png" | od -An -tx1 | tr -d " \n")" = \
          89504e470d0a1a0a ]'

done_testing
