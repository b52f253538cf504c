#!/bin/sh
# The kubernetes plugin through `switchyard run`: each task a Job on the
# loopback API server, its stdout's JSON object the task's output, the
# input context in SWITCHYARD_INPUT; failures named (exit code and log
# tail, OOMKilled, an image that cannot be pulled within its bound,
# Unschedulable within its bound), an evicted pod retried without
# charging an attempt, finished Jobs deleted, the token never shown.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s
make_k8s_host "max_in_flight = 16;"

workflow basic <<WF
workflow = {
  name = "k8s::basic";
  retry = { attempts = 2; delay = 0; };
  tasks = (
    { id = "hello"; command = ["sh", "-c", "echo warming up >&2; echo '{\"greeting\": \"hi\", \"n\": 1}'"]; },
    { id = "echo"; after = ["hello"]; env = { EXTRA = "x"; };
      command = ["python3", "-c", "import json, os; print(json.dumps({'input': json.loads(os.environ['SWITCHYARD_INPUT']), 'extra': os.environ['EXTRA'], 'attempt': os.environ['SWITCHYARD_ATTEMPT']}))"]; },
    { id = "fail"; retry = { attempts = 1; }; command = ["sh", "-c", "echo step one; echo step two; echo broken >&2; exit 3"]; },
    { id = "noobj"; retry = { attempts = 1; }; command = ["sh", "-c", "echo not json"]; },
    { id = "oom"; retry = { attempts = 1; }; resources = { memory = "64Mi"; cpu = "250m"; };
      annotations = ["test.switchyard/fault=oom:0.2"]; command = ["sleep", "30"]; },
    { id = "pull"; retry = { attempts = 1; }; image = "nosuch/image:1";
      annotations = ["test.switchyard/fault=image-pull"]; command = ["true"]; },
    { id = "unsched"; retry = { attempts = 1; }; annotations = ["test.switchyard/fault=unschedulable"];
      command = ["true"]; },
    { id = "evict"; retry = { attempts = 1; }; annotations = ["test.switchyard/fault=evict:0.3"];
      command = ["sh", "-c", "if [ -e '$dir/evicted' ]; then echo '{\"second\": true}'; else touch '$dir/evicted'; sleep 30; fi"]; },
    { id = "each"; map = "names";
      command = ["python3", "-c", "import json, os; i = json.loads(os.environ['SWITCHYARD_INPUT']); print(json.dumps({'name': i['item']}))"]; }
  );
};
WF
t0=$(date +%s)
run run k8s::basic --context '{"x": 1, "names": ["ann", "bo", "cy"]}'
t1=$(date +%s)
rc_is 1 "a run with failing Jobs exits 1"
id=$(run_id)
expect '["Completed", 1]' '[t["hello"]["status"], t["hello"]["attempts"]]' "a Job that prints a JSON object completes on its first attempt"
expect '{"greeting": "hi", "n": 1}' 't["hello"]["output"]' "its last stdout line is the output (stderr before it ignored)"
expect '{"attempt": "1", "extra": "x", "input": {"greeting": "hi", "n": 1, "names": ["ann", "bo", "cy"], "x": 1}}' 't["echo"]["output"]' "SWITCHYARD_INPUT holds the context (the run's and the dependency's output); env and the attempt reach the container"
expect '{"each": [{"name": "ann"}, {"name": "bo"}, {"name": "cy"}]}' 't["each"]["output"]' "a map's elements are one Job each (they share a task id), their outputs in order"
expect '["Failed", 1]' '[t["fail"]["status"], t["fail"]["attempts"]]' "a non-zero exit fails the attempt"
expect true 't["fail"]["error"].startswith("exit code 3")' "with its exit code"
expect true '"step two" in t["fail"]["error"] and "broken" in t["fail"]["error"]' "and the log's tail"
expect true '"does not end with a JSON object" in t["noobj"]["error"] and "not json" in t["noobj"]["error"]' "a Job that prints no JSON object fails, saying so, with its log"
expect true 't["oom"]["error"].startswith("OOMKilled (memory limit 64Mi)")' "OOMKilled is named with the memory limit, not as exit code 137"
expect true 't["pull"]["error"].startswith("ImagePullBackOff for 1 s") or t["pull"]["error"].startswith("ErrImagePull for 1 s")' "an image that cannot be pulled fails at image_pull_timeout"
expect true '"Failed to pull image" in t["pull"]["error"]' "with the kubelet's message"
expect true 't["unsched"]["error"].startswith("Unschedulable for 1 s") and "nodes are available" in t["unsched"]["error"]' "Unschedulable past its bound fails with the scheduler's message"
expect '["Completed", 1, {"second": true}]' '[t["evict"]["status"], t["evict"]["attempts"], t["evict"]["output"]]' "an evicted pod is run again without charging an attempt"
kexpect '[0, 0]' '[s["jobs"], s["processes"]]' "every finished Job was deleted, no pod process is left running"
kexpect true '1 <= s["watches_by_resource"].get("jobs", 0) <= 3' "one watch on Jobs served the whole run"
kexpect 0 'sum(1 for q in reqs if q["method"] == "GET" and "/jobs/" in q["path"])' "no Job was polled"
kexpect 12 'sum(1 for q in reqs if q["method"] == "DELETE" and "/jobs/" in q["path"])' "each of the 12 Jobs was deleted once its end was read"
kexpect 0 's["jobs_conflicts"]' "no create met another attempt's Job (409): each element named its own"
verify "$id"
[ $((t1 - t0)) -lt 15 ]; ok $? "no failure waited for a task timeout ($((t1 - t0)) s)"
grep -q "$SY_K8S_TOKEN" "$dir/var/switchyard.db"; [ $? -ne 0 ]; ok $? "the token is in no store row"
grep -q "$SY_K8S_TOKEN" "$dir/status.json"; [ $? -ne 0 ]; ok $? "nor in the status"
done_testing
