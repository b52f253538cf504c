"""The loopback Kubernetes API server of tests/kubernetes/server.py."""
