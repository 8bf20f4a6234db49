#!/bin/sh
# Records traced-server at 2 CPUs with `poolsim record`, predicts it under
# other conditions with `poolsim simulate --set ...`, runs the real program
# under those conditions (taskset, a cgroup v1 CFS quota, fewer workers) and
# prints both side by side (docs/traces.md). Run as root from the repository
# after building (build/poolsim, build/traced-server).
#   examples/traced-server/validate.sh OUTDIR REPS -- TRACED_SERVER_ARGS...
# The program runs at nice -19 in its own autogroup of nice -19 (setsid,
# /proc/self/autogroup) in every condition, the recording included: this
# machine is shared with other builds, each in its own autogroup, and with
# sched_autogroup_enabled a plain nice only ranks threads inside one group.
set -eu
out=$1; reps=$2; shift 2; [ "$1" = "--" ] && shift
bin=$(pwd)/build
mkdir -p "$out"
cg=/sys/fs/cgroup/cpu/poolsim-traces-validate-$$
cleanup() { [ -d "$cg" ] && rmdir "$cg" 2>/dev/null || true; }
trap cleanup EXIT INT TERM

fixed_loop() {  # wall seconds of a fixed CPU loop: how loaded the machine is
  /usr/bin/time -f %e python3 -c 'sum(range(3*10**7))' 2>&1 | tail -1
}
echo "fixed loop before: $(fixed_loop) s"
boosted() { setsid -w sh -c 'echo -19 > /proc/self/autogroup; exec nice -n -19 "$@"' boosted "$@"; }
boosted "$bin/poolsim" record --out "$out/traced.yaml" -- "$bin/traced-server" "$@" \
  > "$out/record.log" 2>&1
grep -E "throughput" "$out/record.log"

measure() {  # label, wrapper... -- server args
  label=$1; shift
  for i in $(seq "$reps"); do
    "$@" 2>&1 | grep throughput | sed "s/^/$label run $i: /"
  done
}
predict() {  # label, --set args...
  label=$1; shift
  "$bin/poolsim" simulate "$out/traced.yaml" "$@" --json - -q | python3 -c "
import json, sys
m = json.load(sys.stdin)['metrics']
print('$label predicted: throughput %.1f/s, latency mean %.3f ms, queue wait mean %.3f ms'
      % (m['throughput'], m['latency_mean'] * 1e3, m['queue_wait_mean'] * 1e3))"
}
workers=$(sed -n 's/.*--workers \([0-9]*\).*/\1/p' <<EOF2
$*
EOF2
)
half=$((workers / 2))
predict "2 CPUs"
measure "2 CPUs" boosted "$bin/traced-server" "$@"
predict "1 CPU (cpuset 0)" --set limits.cpuset=0
measure "1 CPU (cpuset 0)" boosted taskset -c 0 "$bin/traced-server" "$@"
predict "0.5 CPU quota" --set limits.cpus=0.5
mkdir "$cg"
echo 100000 > "$cg/cpu.cfs_period_us"
echo 50000 > "$cg/cpu.cfs_quota_us"
# A task in a cgroup leaves its autogroup: the group's weight is its boost.
echo 262144 > "$cg/cpu.shares"
measure "0.5 CPU quota" boosted sh -c "echo \$\$ > $cg/cgroup.procs && exec $bin/traced-server $*"
predict "$half workers" --set backend.threads=$half
measure "$half workers" boosted "$bin/traced-server" "$@" --workers $half
echo "fixed loop after: $(fixed_loop) s"
