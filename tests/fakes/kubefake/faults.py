"""kubefake/faults.py - injected faults, on demand and repeatable.

Set with POST /_fake/faults (a JSON object) or --faults:
  latency_ms        delay before answering every API request
  latency_jitter_ms  plus a uniform random part up to this
  error_rate        probability of answering `status` instead (nothing done)
  status            the injected status (default 503; 429 adds Retry-After)
  retry_after       Retry-After seconds of an injected 429 (default 1)
  drop_watch_rate   probability of cutting a watch stream after its first event
  gone_rate         probability of answering a watch with an ERROR 410 event
  drop_exec_rate    probability of cutting an exec WebSocket (no close frame)
                    after its first output message
  count             apply error and drop faults to this many requests only
  paths             regular expression the request path must match
  verbs             list of verbs (get, list, watch, create, delete, exec...)
  seed              reseed the RNG
GET /_fake/state reports the injected counts.
"""
import random
import re
import threading


class Faults:
    def __init__(self, seed=0):
        self.lock = threading.Lock()
        self.rng = random.Random(seed)
        self.seed = seed
        self.conf = {}
        self.injected = {"errors": 0, "drops": 0, "gone": 0, "exec_drops": 0}

    def set(self, conf):
        with self.lock:
            if "seed" in conf:
                self.rng.seed(conf["seed"])
            self.conf = {k: v for k, v in conf.items() if k != "seed"}
            return dict(self.conf)

    def reset(self):
        with self.lock:
            self.conf = {}
            self.rng.seed(self.seed)

    def counts(self):
        with self.lock:
            return dict(self.injected)

    def decide(self, path, verb):
        """What strikes this request: a dict with latency_ms, and maybe
        status/retry_after, drop_watch, gone, drop_exec."""
        out = {}
        with self.lock:
            f = self.conf
            if not f:
                return out
            if f.get("paths") and not re.search(f["paths"], path):
                return out
            if f.get("verbs") and verb not in f["verbs"]:
                return out
            lat = f.get("latency_ms", 0)
            if f.get("latency_jitter_ms"):
                lat += self.rng.random() * f["latency_jitter_ms"]
            out["latency_ms"] = lat
            left = f.get("count")
            if left is not None and left <= 0:
                return out
            hit = False
            if f.get("error_rate") and self.rng.random() < f["error_rate"]:
                out["status"] = int(f.get("status", 503))
                out["retry_after"] = f.get("retry_after", 1)
                self.injected["errors"] += 1
                hit = True
            elif verb == "watch" and f.get("gone_rate") and self.rng.random() < f["gone_rate"]:
                out["gone"] = True
                self.injected["gone"] += 1
                hit = True
            elif verb == "watch" and f.get("drop_watch_rate") and \
                    self.rng.random() < f["drop_watch_rate"]:
                out["drop_watch"] = True
                self.injected["drops"] += 1
                hit = True
            elif verb == "exec" and f.get("drop_exec_rate") and \
                    self.rng.random() < f["drop_exec_rate"]:
                out["drop_exec"] = True
                self.injected["exec_drops"] += 1
                hit = True
            if hit and left is not None:
                f["count"] = left - 1
        return out
