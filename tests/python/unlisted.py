"""tests/python/unlisted.py - sandboxes() over every provider while one
is down, in the process and through polysandboxd: run by
tests/server/list.sh (UNLISTED_ARGS="BASE TAG BOX CONFIG_DIR"), printing
one line per runner: NAME LISTED-RIGHT WARNED-RIGHT ..."""

import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "python"))
import polysandbox as psb  # noqa: E402

base, tag, box, cfg = os.environ["UNLISTED_ARGS"].split(" ")
for name, runner in (("local", psb.Local(cfg)), ("client", psb.Client(base))):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = [s.id for s in runner.sandboxes(labels={"t": tag})]
    msgs = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]
    print(name, got == [box], len(msgs) == 1 and "'docker'" in msgs[0] and "nobody.sock" in msgs[0],
          got, msgs, flush=True)
