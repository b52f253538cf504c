#!/bin/sh
# The Job the plugin makes, read back from the API server: its name and
# labels from run, task and attempt, annotations in full, one container
# with the task's image, command, env, resources (gpus as nvidia.com/gpu)
# and SWITCHYARD_INPUT, backoffLimit 0, restartPolicy Never, the task's
# timeout as activeDeadlineSeconds, the instance's node selector,
# tolerations, pull secrets and service account; with keep_finished the
# finished Job stays (ttlSecondsAfterFinished) instead of being deleted.
. "$SY_SRCDIR/tests/kubernetes/host.sh"
skip_under_valgrind
dir=$(mktemp -d "${TMPDIR:-/tmp}/sy-k8s-man-XXXXXX")
chmod 0700 "$dir"
trap 'stop_k8s; rm -rf "$dir"' EXIT
start_k8s
make_k8s_host 'keep_finished = "1h"; service_account = "runner"; image_pull_secrets = ["regcred"];
               node_selector = ["pool=batch"];
               tolerations = ( { key = "gpu"; operator = "Exists"; effect = "NoSchedule"; } );'
workflow shape <<'WF'
workflow = {
  name = "k8s::shape";
  retry = { attempts = 1; };
  tasks = (
    { id = "Train_Step"; image = "registry.example/train:3"; timeout = "90s";
      command = ["sh", "-c", "echo '{\"done\": true}'"];
      env = { MODE = "fast"; N = 3; };
      resources = { cpu = "500m"; memory = "1Gi"; gpus = 2; };
      node_selector = ["zone=a"]; annotations = ["team=ml"]; }
  );
};
WF
run run k8s::shape --context '{"k": "v"}'
rc_is 0 "the task completes"
id=$(run_id)
name=$(k8s_state '[k for k in s["jobs_by_name"]][0]')
k8s_api GET "/apis/batch/v1/namespaces/sy/jobs/$name" | sed 1d >"$dir/job.json"
check() {
    v=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); c = j["spec"]["template"]["spec"]["containers"][0]; e = {x["name"]: x.get("value") for x in c["env"]}; v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$dir/job.json" "$1")
    [ "$v" = "$2" ] || echo "# $1: got '$v', expected '$2'"
    [ "$v" = "$2" ]; ok $? "$3"
}
case "$name" in sy-"$id"-train-step-1-????????) ok 0 "the Job's name is sy-RUN-TASK-ATTEMPT-HASH, lowercased ($name)" ;;
    *) ok 1 "the Job's name is sy-RUN-TASK-ATTEMPT-HASH, lowercased ($name)" ;; esac
check 'j["metadata"]["labels"]' "{\"switchyard.dev/attempt\": \"1\", \"switchyard.dev/instance\": \"switchyard\", \"switchyard.dev/run\": \"$id\", \"switchyard.dev/task-hash\": \"$(python3 -c 'import sys; h = 0xcbf29ce484222325
for b in b"Train_Step": h = ((h ^ b) * 0x100000001b3) % 2**64
print("%016x" % h)')\"}" "labels: instance, run, task hash, attempt"
check '[j["metadata"]["annotations"][k] for k in ("switchyard.dev/task", "switchyard.dev/namespace", "switchyard.dev/run")]' "[\"Train_Step\", \"public::k8s::shape::Train_Step\", \"$id\"]" "annotations carry the names in full"
check '[j["spec"]["backoffLimit"], j["spec"]["template"]["spec"]["restartPolicy"], j["spec"]["activeDeadlineSeconds"], j["spec"]["ttlSecondsAfterFinished"]]' '[0, "Never", 90, 3600]' "backoffLimit 0, restartPolicy Never, the timeout as activeDeadlineSeconds, keep_finished as ttlSecondsAfterFinished"
check '[c["name"], c["image"], c["command"]]' '["task", "registry.example/train:3", ["sh", "-c", "echo '"'"'{\"done\": true}'"'"'"]]' "one container with the task's image and command"
check '[json.loads(e["SWITCHYARD_INPUT"]), e["SWITCHYARD_TASK_ID"], e["SWITCHYARD_ATTEMPT"], e["MODE"], e["N"]]' '[{"k": "v"}, "Train_Step", "1", "fast", "3"]' "the input context and the task's env"
check 'c["resources"]' '{"limits": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "2"}, "requests": {"cpu": "500m", "memory": "1Gi"}}' "resources: cpu and memory requested and limited, gpus as nvidia.com/gpu"
check '[j["spec"]["template"]["spec"][k] for k in ("nodeSelector", "tolerations", "imagePullSecrets", "serviceAccountName")]' '[{"pool": "batch", "zone": "a"}, [{"effect": "NoSchedule", "key": "gpu", "operator": "Exists"}], [{"name": "regcred"}], "runner"]' "node selector (instance's and task's), tolerations, pull secrets, service account"
check 'j["spec"]["template"]["metadata"]["annotations"]' '{"team": "ml"}' "the task's pod annotations"
kexpect 0 'sum(1 for q in reqs if q["method"] == "DELETE")' "with keep_finished the finished Job is not deleted"
kexpect 1 's["jobs"]' "it is still there"
verify
done_testing
