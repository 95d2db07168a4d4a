#!/usr/bin/env python3
# tests/image/tokend.py - a token service for Debian's docker-registry
# (distribution 2.8, auth: token), as Docker Hub's auth.docker.io is one:
# GET /token?service=S&scope=repository:NAME:pull answers {"token": JWT}
# signed RS256 with KEY, the certificate CERT in its x5c header (the
# registry trusts it through rootcertbundle).  Anonymous, like Docker Hub's
# pull tokens.  Counts the tokens it gave in DIR/tokens, and writes who
# asked (a Basic user:password, or anonymous) in DIR/token-auth.  Prints
# its port.
#
#   tokend.py KEY.pem CERT.pem ISSUER DIR [refuse]
import base64
import json
import os
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

KEY = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), None)
CERT = x509.load_pem_x509_certificate(open(sys.argv[2], "rb").read())
ISSUER, DIR = sys.argv[3], sys.argv[4]
REFUSE = len(sys.argv) > 5 and sys.argv[5] == "refuse"


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token(service, scope):
    access = []
    parts = scope.split(":")
    if len(parts) == 3 and parts[0] == "repository":
        access.append({"type": "repository", "name": parts[1],
                       "actions": [a for a in parts[2].split(",") if a == "pull"]})
    now = int(time.time())
    header = {"typ": "JWT", "alg": "RS256",
              "x5c": [base64.b64encode(CERT.public_bytes(serialization.Encoding.DER)).decode()]}
    claims = {"iss": ISSUER, "sub": "", "aud": service, "exp": now + 300, "nbf": now - 60,
              "iat": now, "jti": os.urandom(8).hex(), "access": access}
    signing = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    sig = KEY.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing + "." + b64(sig)


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path != "/token" or REFUSE:
            self.send_response(401 if REFUSE else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps({"token": token(q.get("service", [""])[0],
                                          q.get("scope", [""])[0])}).encode()
        with open(os.path.join(DIR, "tokens"), "a") as f:
            f.write(q.get("scope", [""])[0] + "\n")
        # Who asked: the Basic user:password given, or "anonymous".
        auth = self.headers.get("Authorization", "")
        who = (base64.b64decode(auth[6:]).decode("utf-8", "replace")
               if auth.startswith("Basic ") else "anonymous")
        with open(os.path.join(DIR, "token-auth"), "a") as f:
            f.write(who + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


srv = HTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
