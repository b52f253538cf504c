#!/bin/sh
# Tenants' weights from switchyard.cfg reach the dispatcher of a real host:
# two tenants of weight 1 and 3 with backlogs on an instance of one slot
# take turns 1:3 (stride scheduling, docs/flow-control.md), each
# tenant's tasks in their order; and priorities order a run's tasks
# before fair share does.
. "$SY_SRCDIR/tests/integration/lib.sh"
if [ -n "$SY_WRAP" ]; then
    echo "1..0 # SKIP serve started twice; the sanitizer pass runs it (tests/engine/test_priority runs the same orders under valgrind)"
    exit 0
fi
make_host 'tenants = { a = { weight = 1; }; b = { weight = 3; }; };'
sed -i 's/slots = 4;/slots = 1;/' "$host/switchyard.cfg"
for t in a b; do
    {
        printf 'workflow = { name = "w%s"; tenant = "%s"; tasks = (\n' "$t" "$t"
        for i in 1 2 3 4 5 6 7 8; do
            printf '  { id = "%s%d"; sleep_ms = 5; }%s\n' "$t" "$i" "$([ $i -lt 8 ] && echo ,)"
        done
        printf '); };\n'
    } | workflow "w$t"
done
run check
rc_is 0 "check accepts the tenants"
run submit a::wa
rc_is 0 "tenant a's backlog submitted"
run submit b::wb
rc_is 0 "tenant b's backlog submitted"
run serve --exit-when-idle
rc_is 0 "serve runs both and exits"
order=$(grep "^dispatch " "$host/dispatch.log" | sed 's/.*::\([a-z0-9]*\) [0-9]*$/\1/' | tr '\n' ' ')
echo "# dispatched: $order"
# From b's first start on, while both have tasks: b b b a ...; a at most
# one ahead of or behind its quarter at every point.
python3 - "$order" <<'PY'
import sys
order = sys.argv[1].split()
assert sorted(order) == sorted(["a%d" % i for i in range(1, 9)] + ["b%d" % i for i in range(1, 9)]), order
for t in "ab":
    mine = [x for x in order if x[0] == t]
    assert mine == ["%s%d" % (t, i) for i in range(1, 9)], mine
start = next(i for i, x in enumerate(order) if x[0] == "b")
na = nb = 0
for x in order[start:]:
    if nb == 8 or na + order[:start].count("a") == 8:
        break
    na += x[0] == "a"
    nb += x[0] == "b"
    n = na + nb
    assert abs(na - n / 4) <= 1, (order, n, na)
assert nb >= 6, order
PY
ok $? "b took 3 starts of every 4 while both had work, each tenant in its order"

# Priorities come before the share: b's run is of lower priority now.
rm -f "$host/dispatch.log"
sed -i 's/tenant = "b";/tenant = "b"; priority = -1;/' "$host/workflows/wb.cfg"
run submit a::wa
run submit b::wb
run serve --exit-when-idle
rc_is 0 "serve runs both again"
order=$(grep "^dispatch " "$host/dispatch.log" | sed 's/.*::\([a-z0-9]*\) [0-9]*$/\1/' | tr '\n' ' ')
echo "# dispatched: $order"
case "$order" in
    *b*a*) ok 1 "a task of b (priority -1) started before one of a" ;;
    *) ok 0 "every task of a (priority 0) started before b's (priority -1)" ;;
esac
cleanup_host
done_testing
