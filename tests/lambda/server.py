#!/usr/bin/env python3
"""A Lambda-compatible Invoke endpoint on loopback, for the lambda plugin's
tests.  Standard library only.

Every request's SigV4 signature is checked with the shared secret
(recomputed here independently of the plugin's signer: the path encoded
again as botocore does, the query decoded and re-encoded, the signed
headers folded); a bad one is answered 403 InvalidSignatureException.

What a function does is in its name (the last part of an ARN, before any
`:alias`), so each test picks its behaviour and gets its own counters:

  echo...            200 {"function", "qualifier", "input", "invocation_type"}
                     and X-Amz-Executed-Version (the qualifier, or 7)
  fail...            200 with X-Amz-Function-Error: Unhandled
  scalar...          200 with a JSON string as the answer
  throttle-N...      429 with Retry-After: 1 for the first N calls, then echo
  throttledate-N...  429 with Retry-After as an HTTP date 2 s ahead
  throttlebody-N...  429 with retryAfterSeconds in the body only
  throttlebare-N...  429 with no retry hint at all
  error5xx-N...      500 ServiceException for the first N calls, then echo
  slow-MS...         answers after MS milliseconds
  drop...            reads the request and closes the connection
  missing...         404 ResourceNotFoundException
  Event calls        202 (after the same throttle/5xx/missing rules)

Bodies over --max-payload are answered 413 RequestEntityTooLargeException.
Each request is appended to --log as one JSON line.  The metadata
endpoints (IMDSv2 and the container endpoint) hand out the same keys with
a session token when --token is given.

Usage: lambda_server.py --port-file F --log F [--access-key K --secret S]
       [--region R] [--token T] [--max-payload N]
"""
import argparse
import base64
import datetime
import email.utils
import hashlib
import hmac
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
COUNTS = {}
PATH_RE = re.compile(r"^/2015-03-31/functions/([^/]+)/invocations$")


def quote(s):
    return urllib.parse.quote(s, safe="~")


def canonical_uri(raw):
    segs = []
    for s in raw.split("/"):
        if s in ("", "."):
            continue
        if s == "..":
            if segs:
                segs.pop()
            continue
        segs.append(s)
    out = "/" + "/".join(quote(s) for s in segs)
    if segs and raw.endswith("/"):
        out += "/"
    return out


def canonical_query(q):
    pairs = []
    for part in q.split("&") if q else []:
        if not part:
            continue
        k, _, v = part.partition("=")
        pairs.append((quote(urllib.parse.unquote(k)), quote(urllib.parse.unquote(v))))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def fold(v):
    return " ".join(v.split())


def sign(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def check_signature(handler, body):
    """None when the signature holds, else the reason."""
    auth = handler.headers.get("Authorization", "")
    m = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                 r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$", auth)
    if not m:
        return "no AWS4-HMAC-SHA256 Authorization header"
    akid, day, region, service, signed, sig = m.groups()
    if akid != ARGS.access_key:
        return f"unknown access key {akid}"
    if region != ARGS.region or service != "lambda":
        return f"scope {region}/{service}, expected {ARGS.region}/lambda"
    amz_date = handler.headers.get("X-Amz-Date", "")
    if len(handler.headers.get_all("X-Amz-Date") or []) != 1:
        return "X-Amz-Date must be sent exactly once"
    try:
        when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        return "bad X-Amz-Date"
    if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 300:
        return "signature expired"
    if not amz_date.startswith(day):
        return "credential date differs from X-Amz-Date"
    names = signed.split(";")
    for required in ("host", "x-amz-date"):
        if required not in names:
            return f"{required} is not signed"
    if ARGS.token:
        if "x-amz-security-token" not in names:
            return "x-amz-security-token is not signed"
        if handler.headers.get("X-Amz-Security-Token") != ARGS.token:
            return "bad security token"
    raw_path, _, query = handler.path.partition("?")
    hdrs = ""
    for n in names:
        vals = handler.headers.get_all(n) or []
        hdrs += f"{n}:{','.join(fold(v) for v in vals)}\n"
    creq = "\n".join(["POST" if handler.command == "POST" else handler.command,
                      canonical_uri(raw_path), canonical_query(query), hdrs,
                      signed, hashlib.sha256(body).hexdigest()])
    scope = f"{day}/{region}/lambda/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = sign(("AWS4" + ARGS.secret).encode(), day)
    k = sign(k, region)
    k = sign(k, "lambda")
    k = sign(k, "aws4_request")
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, sig):
        return "The request signature we calculated does not match the signature you provided"
    return None


def bare_name(function):
    """arn:aws:lambda:R:A:function:NAME[:Q] or NAME[:Q] -> (NAME, Q)."""
    parts = function.split(":")
    if function.startswith("arn:"):
        return parts[6] if len(parts) > 6 else "", parts[7] if len(parts) > 7 else None
    if len(parts) == 3:  # ACCOUNT:function:NAME (partial ARN)
        return parts[2], None
    return parts[0], parts[1] if len(parts) > 1 else None


def count(key):
    with LOCK:
        COUNTS[key] = COUNTS.get(key, 0) + 1
        return COUNTS[key]


def number(name, prefix):
    m = re.match(re.escape(prefix) + r"-(\d+)", name)
    return int(m.group(1)) if m else 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, etype, message, extra=None):
        doc = {"Type": "User", "message": message}
        doc.update(extra or {})
        self.send(status, json.dumps(doc).encode(),
                  [("x-amzn-ErrorType", f"{etype}:http://internal.amazon.com/coral/"),
                   ("Content-Type", "application/json")])

    def record(self, **kw):
        if ARGS.log:
            with LOCK, open(ARGS.log, "a") as f:
                f.write(json.dumps(kw) + "\n")

    # ---- the metadata endpoints ------------------------------------------
    def creds_doc(self, container):
        exp = (datetime.datetime.now(datetime.timezone.utc) +
               datetime.timedelta(seconds=ARGS.creds_ttl)).strftime("%Y-%m-%dT%H:%M:%SZ")
        doc = {"AccessKeyId": ARGS.access_key, "SecretAccessKey": ARGS.secret,
               "Token": ARGS.token or "", "Expiration": exp}
        if not container:
            doc.update({"Code": "Success", "Type": "AWS-HMAC"})
        return json.dumps(doc).encode()

    def do_PUT(self):
        if self.path == "/latest/api/token" and self.headers.get(
                "X-aws-ec2-metadata-token-ttl-seconds"):
            count("imds-token")
            self.record(metadata="token")
            self.send(200, b"imds-session-token")
        else:
            self.send(404)

    def do_GET(self):
        if self.path.startswith("/latest/meta-data/iam/security-credentials/"):
            if self.headers.get("X-aws-ec2-metadata-token") != "imds-session-token":
                self.send(401)
                return
            role = self.path[len("/latest/meta-data/iam/security-credentials/"):]
            self.record(metadata="imds", role=role)
            if role == "":
                self.send(200, b"test-role")
            elif role == "test-role":
                count("imds-creds")
                self.send(200, self.creds_doc(False))
            else:
                self.send(404)
        elif self.path == "/container/creds":
            if self.headers.get("Authorization") != ARGS.container_auth:
                self.send(403)
                return
            count("container-creds")
            self.record(metadata="container")
            self.send(200, self.creds_doc(True))
        else:
            self.send(404)

    # ---- Invoke ---------------------------------------------------------------
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length) if length else b""
        raw_path, _, query = self.path.partition("?")
        m = PATH_RE.match(raw_path)
        if not m:
            self.error(404, "UnknownOperationException", f"no such path {raw_path}")
            return
        function = urllib.parse.unquote(m.group(1))
        qualifier = urllib.parse.parse_qs(query).get("Qualifier", [None])[0]
        itype = self.headers.get("X-Amz-Invocation-Type", "RequestResponse")
        name, alias = bare_name(function)
        bad = check_signature(self, body)
        self.record(function=function, name=name, qualifier=qualifier, alias=alias,
                    type=itype, log_type=self.headers.get("X-Amz-Log-Type"),
                    client_context=self.headers.get("X-Amz-Client-Context"),
                    length=len(body), sig_ok=bad is None, sig_error=bad)
        if bad:
            self.error(403, "InvalidSignatureException", bad)
            return
        if len(body) > ARGS.max_payload:
            self.error(413, "RequestEntityTooLargeException",
                       f"Request must be smaller than {ARGS.max_payload} bytes for the "
                       "InvokeFunction operation")
            return
        n = count(function + "|" + str(qualifier))
        if name.startswith("missing"):
            self.error(404, "ResourceNotFoundException", f"Function not found: {function}")
            return
        if name.startswith("throttle-") and n <= number(name, "throttle"):
            self.send(429, json.dumps({"Reason": "ReservedFunctionConcurrentInvocationLimitExceeded",
                                       "Type": "User", "message": "Rate Exceeded."}).encode(),
                      [("Retry-After", "1"),
                       ("x-amzn-ErrorType", "TooManyRequestsException")])
            return
        if name.startswith("throttledate-") and n <= number(name, "throttledate"):
            self.send(429, json.dumps({"Reason": "FunctionInvocationRateLimitExceeded",
                                       "Type": "User", "message": "Rate Exceeded."}).encode(),
                      [("Retry-After", email.utils.formatdate(time.time() + 2, usegmt=True)),
                       ("x-amzn-ErrorType", "TooManyRequestsException")])
            return
        if name.startswith("throttlebody-") and n <= number(name, "throttlebody"):
            self.error(429, "TooManyRequestsException", "Rate Exceeded.",
                       {"Reason": "FunctionInvocationRateLimitExceeded",
                        "retryAfterSeconds": "1"})
            return
        if name.startswith("throttlebare-") and n <= number(name, "throttlebare"):
            self.error(429, "TooManyRequestsException", "Rate Exceeded.",
                       {"Reason": "ConcurrentInvocationLimitExceeded"})
            return
        if name.startswith("error5xx-") and n <= number(name, "error5xx"):
            self.error(500, "ServiceException", "internal failure, try again")
            return
        if name.startswith("drop"):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if name.startswith("slow-"):
            time.sleep(number(name, "slow") / 1000.0)
        if itype == "Event":
            self.send(202)
            return
        version = qualifier if qualifier and qualifier.isdigit() else (alias or "7")
        headers = [("X-Amz-Executed-Version", version), ("Content-Type", "application/json")]
        if self.headers.get("X-Amz-Log-Type") == "Tail":
            log = f"START RequestId: 1\nhello from {name}\nEND RequestId: 1\n"
            headers.append(("X-Amz-Log-Result", base64.b64encode(log.encode()).decode()))
        if name.startswith("fail"):
            headers.append(("X-Amz-Function-Error", "Unhandled"))
            self.send(200, json.dumps({"errorType": "ValueError",
                                       "errorMessage": "bad input",
                                       "stackTrace": []}).encode(), headers)
            return
        if name.startswith("scalar"):
            self.send(200, b'"hello"', headers)
            return
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            payload = None
        out = {"function": function, "qualifier": qualifier, "input": payload,
               "invocation_type": itype}
        cc = self.headers.get("X-Amz-Client-Context")
        if cc:
            out["client_context"] = json.loads(base64.b64decode(cc))
        self.send(200, json.dumps(out).encode(), headers)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        # A client that abandoned its call (cancel, timeout) is expected.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log")
    p.add_argument("--access-key", default="AKIDTEST")
    p.add_argument("--secret", default="secret/test+key")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--token")
    p.add_argument("--container-auth", default="Bearer container-token")
    p.add_argument("--creds-ttl", type=int, default=3600)
    p.add_argument("--max-payload", type=int, default=6 * 1024 * 1024)
    ARGS = p.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
