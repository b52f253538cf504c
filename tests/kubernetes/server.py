#!/usr/bin/env python3
"""A loopback Kubernetes API server for the kubernetes plugin's tests.
Standard library only; the parts are in tests/kubernetes/apiserver/.

It serves, over HTTPS with a bearer token (or a client certificate signed
by --client-ca), the discovery documents, batch/v1 Jobs and v1 Pods in any
namespace: create, get, list and watch with label and field selectors,
delete with a propagation policy, pods/log.  Each Job gets a Pod whose
container's command runs here as a local process (the image is ignored);
docs/testing.md lists what is implemented and the faults it injects.

On start it writes --kubeconfig (server, CA, token or client certificate,
a context and its namespace), then the port to --port-file.  SIGTERM
kills every process group it started.

Usage: server.py --port-file F --cert F --key F --ca F --token T
       [--kubeconfig F] [--client-ca F] [--client-cert F --client-key F]
       [--namespace NS] [--history N] [--log F] [--inline]
"""
import argparse
import base64
import os
import shutil
import signal
import ssl
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from apiserver.controller import Controller  # noqa: E402
from apiserver.handler import Server  # noqa: E402
from apiserver.store import Store  # noqa: E402


def kubeconfig(args, port):
    def ref(key, path):
        if args.inline:
            with open(path, "rb") as f:
                return f"{key}-data: {base64.b64encode(f.read()).decode()}"
        return f"{key}: {os.path.abspath(path)}"

    scheme = "http" if args.insecure_http else "https"
    cluster = [f"    server: {scheme}://127.0.0.1:{port}"]
    if args.ca and not args.insecure_http:
        cluster.append("    " + ref("certificate-authority", args.ca))
    if args.client_cert:
        user = ["    " + ref("client-certificate", args.client_cert),
                "    " + ref("client-key", args.client_key)]
    else:
        user = [f"    token: {args.token}"]
    return "\n".join(["apiVersion: v1", "kind: Config", "clusters:", "- name: switchyard-test",
                      "  cluster:", *cluster, "contexts:", "- name: switchyard-test", "  context:",
                      "    cluster: switchyard-test", "    user: switchyard-test",
                      f"    namespace: {args.namespace}", "current-context: switchyard-test",
                      "preferences: {}", "users:", "- name: switchyard-test", "  user:", *user, ""])


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.rename(tmp, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--token", default=os.environ.get("SY_K8S_TOKEN", "test-token"))
    p.add_argument("--cert", help="the server's certificate (PEM)")
    p.add_argument("--key", help="its key")
    p.add_argument("--ca", help="the CA that signed --cert, named in the kubeconfig")
    p.add_argument("--client-ca", help="accept client certificates signed by this CA")
    p.add_argument("--client-cert", help="the kubeconfig's user authenticates with this certificate")
    p.add_argument("--client-key")
    p.add_argument("--insecure-http", action="store_true", help="plain HTTP (debugging only)")
    p.add_argument("--kubeconfig")
    p.add_argument("--inline", action="store_true", help="the kubeconfig embeds the PEM files (*-data)")
    p.add_argument("--namespace", default="default")
    p.add_argument("--history", type=int, default=1000, help="watch events retained")
    p.add_argument("--workdir", help="where pod logs go (default: a temporary directory)")
    p.add_argument("--start-delay", type=float, default=0.05, help="seconds from Pending to Running")
    p.add_argument("--grace", type=float, default=1.0, help="seconds from SIGTERM to SIGKILL on deletion")
    p.add_argument("--bookmark-interval", type=float, default=1.0)
    p.add_argument("--watch-timeout", type=float, default=1800.0, help="the longest watch, in seconds")
    p.add_argument("--log", help="one JSON line per request")
    args = p.parse_args()

    tls = None
    if not args.insecure_http:
        if not (args.cert and args.key):
            p.error("--cert and --key are required (or --insecure-http)")
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(args.cert, args.key)
        tls.set_alpn_protocols(["http/1.1"])
        if args.client_ca:
            tls.verify_mode = ssl.CERT_OPTIONAL
            tls.load_verify_locations(args.client_ca)
    own_workdir = args.workdir is None
    workdir = args.workdir or tempfile.mkdtemp(prefix="sy-k8s-logs-")
    store = Store(args.history)
    ctl = Controller(store, workdir, args.start_delay, args.grace)
    srv = Server(("127.0.0.1", args.port), store, ctl, args.token, tls,
                 args.bookmark_interval, args.watch_timeout, args.log)

    def stop(signum, frame):
        ctl.shutdown()
        if own_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    port = srv.server_address[1]
    if args.kubeconfig:
        write_atomic(args.kubeconfig, kubeconfig(args, port))
    write_atomic(args.port_file, str(port))
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
