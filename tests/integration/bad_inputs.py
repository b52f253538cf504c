#!/usr/bin/env python3
"""The bad-input table: one row per bad input an operator can hand the host.

Each row writes files into a fresh scratch host (a copy of one prepared
with a store that already holds a run), runs one command, and asserts:
  - the command fails with exit status 1 or 2 (never a signal, never 0);
  - the output holds the row's exact one-line error (after {host} is
    replaced by the scratch directory), naming the file and line or the
    field;
  - nothing else went wrong: no sanitizer report, no "internal error";
  - the store file is byte for byte what it was.

    bad_inputs.py            TAP, for make check (tests/integration/bad_inputs.sh)
    bad_inputs.py --markdown the troubleshooting table docs/troubleshooting.md carries

docs/troubleshooting.md is this table's --markdown output,
between the markers <!-- bad-inputs:begin --> and <!-- bad-inputs:end -->;
the test fails when they differ (regenerate with
`python3 tests/integration/bad_inputs.py --markdown`).
"""
import hashlib
import re
import os
import shutil
import stat
import subprocess
import sys
import tempfile

GOOD_WF = """workflow = {
  name = "good";
  tasks = ( { id = "a"; command = ["true"]; } );
};
"""

BASE_CFG = """store = "sqlite:var/sy.db";
plugin_dirs = ["plugins"];
workflow_dirs = ["workflows"];
executors = { default = { plugin = "thread"; workers = 2; }; };
"""
STRICT_CFG = BASE_CFG + "strict_plugins = true;\n"
TOKENS_ADMIN = 'admin = { listen = "127.0.0.1:0"; tokens_file = "tokens"; };\n'
DIGEST = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def slurm_cfg(setting):
    """BASE_CFG with a slurm instance `hpc` holding setting (line 5)."""
    return BASE_CFG.replace("workers = 2; }; };", "workers = 2; };\n  hpc = { plugin = \"slurm\"; %s }; };" % setting)


def wf(tasks, extra=""):
    return 'workflow = {\n  name = "w";\n%s  tasks = (\n%s\n  );\n};\n' % (extra, tasks)


# Each row: what (the symptom, for the table), files ({path: text | bytes |
# ("copy", plugin name) | ("mode", octal)}), cmd (argv after `switchyard`),
# error (the exact line, {host} for the directory), fix (for the table).
ROWS = [
    # --- configuration ---------------------------------------------------
    dict(what="a syntax error in switchyard.cfg",
         files={"switchyard.cfg": BASE_CFG + "lease = ;\n"},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: syntax error',
         fix="fix the line named; libconfig's syntax: `key = value;`, groups in `{ }`, lists in `( )`"),
    dict(what="an unknown top-level key",
         files={"switchyard.cfg": BASE_CFG + "workers = 4;\n"},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: unknown key 'workers' (known: ...)",
         fix='remove it, or spell one of the keys listed'),
    dict(what="executor settings that are not UTF-8 (the first of two executors)",
         files={"switchyard.cfg": BASE_CFG.replace(
             'executors = { default = { plugin = "thread"; workers = 2; }; };\n',
             'executors = {\n  aaa = { plugin = "thread"; workers = 2; note = "\xe9"; };\n'
             '  default = { plugin = "thread"; workers = 2; };\n};\n').encode("latin-1")},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: executor 'aaa': its settings cannot be held in JSON (text that is not valid UTF-8)",
         fix='write the text in UTF-8'),
    dict(what="an executor instance of a plugin that is not loaded",
         files={"switchyard.cfg": BASE_CFG.replace('"thread"', '"nosuch"')},
         cmd=["check"], error="{host}/switchyard.cfg:4: error: executor 'default': plugin 'nosuch' is not loaded (see `switchyard plugins`)",
         fix='`switchyard plugins` lists what is loaded and why a file was refused'),
    dict(what="an instance setting the plugin does not declare",
         files={"switchyard.cfg": BASE_CFG.replace("workers = 2;", "workers = 2; colour = 1;")},
         cmd=["check"], error="{host}/switchyard.cfg:4: error: executor 'default': unknown key 'colour' (known: ...)",
         fix='use one of the settings listed (`switchyard plugins -v` shows them)'),
    dict(what="an instance setting of the wrong type",
         files={"switchyard.cfg": BASE_CFG.replace("workers = 2;", 'workers = "two";')},
         cmd=["check"], error="{host}/switchyard.cfg:4: error: executor 'default': 'workers': must be an integer, not a string",
         fix='write the type named'),
    dict(what="a negative count",
         files={"switchyard.cfg": BASE_CFG + "max_recoveries = -1;\n"},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'max_recoveries' must be an integer between 0 and 1000",
         fix='a number in the range named'),
    dict(what="a huge count",
         files={"switchyard.cfg": BASE_CFG + "max_recoveries = 99999999999;\n"},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: integer 99999999999 does not fit in 32 bits: libconfig would read another number; write 99999999999L for a 64-bit integer',
         fix='a number in the range named (and `L` for a 64-bit one where a key takes it)'),
    dict(what="a negative duration",
         files={"switchyard.cfg": BASE_CFG + 'shutdown_grace = "-5s";\n'},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: \'shutdown_grace\' bad duration "-5s": expected a number such as "250ms", "5s", "1m", "2h" (at least 1ms)',
         fix='a positive number with a unit'),
    dict(what="a duration without a unit it knows",
         files={"switchyard.cfg": BASE_CFG + 'shutdown_grace = "5 fortnights";\n'},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: \'shutdown_grace\' bad duration "5 fortnights": unknown unit (use ms, s, m, h or d) (at least 1ms)',
         fix='ms, s, m, h or d'),
    dict(what="a log format it does not know",
         files={"switchyard.cfg": BASE_CFG + 'log = { format = "xml"; };\n'},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: \'log.format\' must be "auto", "text", "journal" or "json", not "xml"',
         fix='`"json"` for JSON lines; `"auto"` (the default) writes the journal\'s form under systemd'),
    dict(what="an @include that names a directory",
         files={"switchyard.cfg": BASE_CFG + '@include "."\n'},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: @include ".": a directory is not a regular file',
         fix='name a file; an include is read as part of the file that names it'),
    dict(what="a malformed store URL",
         files={"switchyard.cfg": BASE_CFG.replace('"sqlite:var/sy.db"', '"mysql://db/sy"')},
         cmd=["check"], error='{host}/switchyard.cfg:1: error: store "mysql:...": unknown kind of store: use "sqlite:PATH", "sqlite::memory:" or "postgresql://..."',
         fix='`sqlite:PATH` or `postgresql://...`'),
    dict(what="a store file that is read-only",
         files={"var/sy.db": ("mode", 0o444), "var": ("mode", 0o555)},
         cmd=["submit", "good"],
         error="switchyard: submit: sqlite:{host}/var/sy.db: store definition: attempt to write a readonly database",
         fix="make the file and its directory writable by the host's user", as_user=True),
    # --- routing ---------------------------------------------------------
    dict(what="a glob with an unclosed bracket",
         files={"switchyard.cfg": BASE_CFG + 'routes = ["routes.cfg"];\n',
                "routes.cfg": 'routes = {\n  default = "default";\n  rules = (\n    { match = "public::[ab"; executor = "default"; }\n  );\n};\n'},
         cmd=["check"], error='{host}/routes.cfg:4: error: invalid pattern "public::[ab": unclosed \'[\' (segment "[ab")',
         fix='close the `[`, or escape it as `\\[`'),
    dict(what="a route to an instance that does not exist",
         files={"switchyard.cfg": BASE_CFG + 'routes = ["routes.cfg"];\n',
                "routes.cfg": 'routes = {\n  default = "default";\n  rules = (\n    { match = "public::etl::**"; executor = "gpu0"; }\n  );\n};\n'},
         cmd=["check"], error='{host}/routes.cfg:4: error: rule "public::etl::**" sends to executor \'gpu0\', which is not defined (defined: default)',
         fix='define the instance under `executors`, or route to one of those listed'),
    # --- workflows -------------------------------------------------------
    dict(what="two tasks with one id",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; },\n    { id = "a"; command = ["true"]; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:5: error: duplicate task id 'a' (first defined at line 4)",
         fix='rename one'),
    dict(what="a cycle",
         files={"workflows/w.cfg": wf('    { id = "a"; after = ["b"]; command = ["true"]; },\n'
                                      '    { id = "b"; after = ["a"]; command = ["true"]; }')},
         cmd=["check"], error='{host}/workflows/w.cfg:4: error: cycle: a -> b -> a',
         fix='remove one of the dependencies named'),
    dict(what="a dependency on a task that does not exist",
         files={"workflows/w.cfg": wf('    { id = "a"; after = ["zz"]; command = ["true"]; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': 'after' names unknown task 'zz'",
         fix='fix the id in `after`'),
    dict(what="an unknown task parameter",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; colour = "red"; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a' (executor 'default', plugin 'thread'): unknown key 'colour' (known: ...)",
         fix='use one of the parameters listed'),
    dict(what="a task parameter of the wrong type",
         files={"workflows/w.cfg": wf('    { id = "a"; command = "true"; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a' (executor 'default', plugin 'thread'): 'command': must be a list, not a string",
         fix='write the type named'),
    dict(what="a command that is not on PATH",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["no-such-program-x"]; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': command no-such-program-x: not found on PATH (/usr/bin:/bin)",
         fix="install it, give its path, or extend the host's PATH"),
    dict(what="a command that is not executable",
         files={"bin/plain.sh": "echo {}\n", "workflows/w.cfg": wf('    { id = "a"; command = ["../bin/plain.sh"]; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': command ../bin/plain.sh: {host}/workflows/../bin/plain.sh is not an executable file",
         fix='`chmod +x` it'),
    dict(what="a task library that does not exist",
         files={"workflows/w.cfg": wf('    { id = "a"; function = "../lib/nope.so:f"; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a' (executor 'default', plugin 'thread'): cannot open task library {host}/workflows/../lib/nope.so: No such file or directory",
         fix='build it, or fix the path (relative to the workflow file)'),
    dict(what="a symbol the task library lacks",
         files={"lib/tasks.so": ("copy", "tasklib"), "workflows/w.cfg": wf('    { id = "a"; function = "../lib/tasks.so:no_such_fn"; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a' (executor 'default', plugin 'thread'): task library {host}/workflows/../lib/tasks.so has no symbol no_such_fn (is it exported with SY_TASK_EXPORT?)",
         fix='export the function with `SY_TASK_EXPORT`'),
    dict(what="a task id with a character namespaces do not allow",
         files={"workflows/w.cfg": wf('    { id = "a b"; command = ["true"]; }')},
         cmd=["check"], error='{host}/workflows/w.cfg:4: error: invalid task id "a b": use letters, digits, \'_\', \'.\' and \'-\'',
         fix='letters, digits, `_`, `.`, `-`'),
    dict(what="a task id that is not UTF-8",
         files={"workflows/w.cfg": wf('    { id = "a\xe9"; command = ["true"]; }').encode("latin-1")},
         cmd=["check"], error='{host}/workflows/w.cfg:4: error: invalid task id "a\\xe9": use letters, digits, \'_\', \'.\' and \'-\'',
         fix='letters, digits, `_`, `.`, `-`'),
    dict(what="a namespace too long",
         files={"workflows/w.cfg": wf('    { id = "%s"; command = ["true"]; }' % ("x" * 300))},
         cmd=["check"], error='{host}/workflows/w.cfg:4: error: invalid task id "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...": a name (or each part between "::") is at most 255 characters',
         fix='a shorter id: the router matches segments of up to 255 characters'),
    dict(what="a namespace too deep",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }').replace('name = "w"', 'name = "%s"' % "::".join("s%d" % i for i in range(40)))},
         cmd=["check"], error='{host}/workflows/w.cfg:2: error: invalid workflow name "s0::s1::s2::s3::s4::s5::s6::s7::s8::s9::s10::s11::s12::s13::...": a workflow name has at most 16 parts joined by "::"',
         fix='fewer `::` parts in the name'),
    dict(what="a retry count out of range",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; retry = { attempts = 0; }; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: retry 'attempts' must be an integer from 1 to 1000 (the total number of tries, the first included)",
         fix='1 to 1000'),
    dict(what="a negative timeout",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; timeout = "-1s"; }')},
         cmd=["check"], error='{host}/workflows/w.cfg:4: error: \'timeout\': bad duration "-1s": expected a number such as "250ms", "5s", "1m", "2h"',
         fix='a positive duration'),
    dict(what="an unknown trigger rule",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; trigger = "sometimes"; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': unknown trigger 'sometimes' (valid: all_success, all_done, all_failed, one_success, one_failed, none_failed, always)",
         fix='one of those listed'),
    dict(what="a cron schedule with a field out of range",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  schedule = "61 * * * *";\n')},
         cmd=["check"], error='{host}/workflows/w.cfg:3: error: schedule "61 * * * *": minute field: "61" is out of range 0-59',
         fix='a value in the range named'),
    dict(what="a task in a pool switchyard.cfg does not define",
         files={"switchyard.cfg": BASE_CFG + "pools = { db = 5; };\n",
                "workflows/w.cfg": wf('    { id = "a"; command = ["true"]; pool = "gpu"; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a' (public::w::a): pool 'gpu' is not defined in {host}/switchyard.cfg (defined: db)",
         fix='define it under `pools` in switchyard.cfg, or name one of those listed'),
    dict(what="a concurrency limit of 0",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; limits = ( { key = "db"; limit = 0; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': limits entry 1: 'limit' must be an integer from 1 to 1000000",
         fix='1 or more; to stop a task from running, do not submit it'),
    dict(what="a limit's key template with a brace not closed",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; limits = ( { key = "db:{customer"; limit = 2; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': limits entry 1: key \"db:{customer\": a '{' that is not closed",
         fix='close it: `"db:{customer}"` (a path into the run\'s context)'),
    dict(what="an unknown limit strategy",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; limits = ( { key = "db"; limit = 2; strategy = "wait"; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': limits entry 1: unknown strategy \"wait\" (valid: queue, cancel_newest, cancel_in_progress, drop)",
         fix='one of those listed'),
    dict(what="a rate limit of 0 per interval",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; rate_limits = ( { key = "api"; rate = 0; interval = "1s"; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': rate_limits entry 1: 'rate' must be an integer from 1 to 1000000",
         fix='1 or more tokens per `interval`; for less than one a second, a longer interval: `rate = 1; interval = "1m";`'),
    dict(what="a rate limit's burst under 1",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; rate_limits = ( { key = "api"; rate = 5; interval = "1s"; burst = 0; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': rate_limits entry 1: 'burst' must be an integer from 1 to 1000000",
         fix='1 or more (it defaults to `rate`)'),
    dict(what="a rate limit's interval in an unknown unit",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; rate_limits = ( { key = "api"; rate = 5; interval = "1 week"; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': rate_limits entry 1: 'interval' must be a duration from 1ms to 1d, such as \"1s\" or \"1m\": bad duration \"1 week\": unknown unit (use ms, s, m, h or d)",
         fix='a duration from 1ms to 1d: `"1s"`, `"1m"`, `"1h"`'),
    dict(what="a task naming a rate limit switchyard.cfg does not define",
         files={"switchyard.cfg": BASE_CFG + "rate_limits = { crm = { rate = 10; interval = \"1s\"; }; };\n",
                "workflows/w.cfg": wf('    { id = "a"; command = ["true"]; rate_limits = ( { name = "api"; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a' (public::w::a): rate limit 'api' is not defined in {host}/switchyard.cfg (defined: crm)",
         fix='define it under `rate_limits` in switchyard.cfg, or name one of those listed'),
    dict(what="a named rate limit given a rate of its own",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; rate_limits = ( { name = "crm"; rate = 5; } ); }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': rate_limits entry 1: 'rate' with 'name': the rate limit 'crm' of switchyard.cfg says it",
         fix='drop `rate`, `interval` and `burst` (switchyard.cfg\'s apply), or drop `name` for a bucket of the task\'s own'),
    dict(what="a rate limit of switchyard.cfg without an interval",
         files={"switchyard.cfg": BASE_CFG + "rate_limits = { crm = { rate = 10; }; };\n"},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: rate limit 'crm' has no 'interval' (e.g. crm = { rate = 10; interval = \"1s\"; };)",
         fix='add `interval = "1s";` (1ms to 1d)'),
    dict(what="a task cache's key template with a brace not closed",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; cache = { key = "{file"; lifetime = "1h"; }; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': cache: key \"{file\": a '{' that is not closed",
         fix='close it: `"{file}"` (a path into the task\'s input)'),
    dict(what="a task cache without a lifetime",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; cache = { key = "{file}"; }; }')},
         cmd=["check"], error="{host}/workflows/w.cfg:4: error: task 'a': cache has no 'lifetime' (e.g. lifetime = \"1h\";)",
         fix='say how long a cached output is used: `lifetime = "1h";`'),
    dict(what="a pool of size 0",
         files={"switchyard.cfg": BASE_CFG + "pools = { db = 0; };\n"},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: pool 'db' must be an integer from 1 to 1000000",
         fix='1 or more slots'),
    # --- triggers (docs/events.md) ----------------------------------------
    dict(what="a trigger without a name",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { event = "landed"; } );\n')},
         cmd=["check"], error='{host}/workflows/w.cfg:3: error: trigger 1 has no \'name\' (e.g. name = "on-landed";)',
         fix='name it; the name is how `switchyard triggers` and the store know it'),
    dict(what="a trigger on nothing",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: a trigger needs 'event' (a named event), 'run' (a workflow whose runs' ends start this one) or 'all' (several of them)",
         fix='add one of those'),
    dict(what="a trigger on an event name with a space",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; event = "file landed"; } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: 'event' \"file landed\": may hold only letters, digits and . _ - : /",
         fix='letters, digits and `. _ - : /`: `"file.landed"`'),
    dict(what="a trigger on a run state that is not an end",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; run = "up"; states = ["Running"]; } );\n')},
         cmd=["check"], error='{host}/workflows/w.cfg:3: error: \'states\': "Running" is not a state a run ends in: use "Completed", "Failed" or "Cancelled"',
         fix='one of those listed'),
    dict(what="a trigger on the workflow's own runs",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; run = "w"; } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: 'run' names this workflow: it would start itself",
         fix='name another workflow; a loop is a schedule or a task\'s retry'),
    dict(what="an AND of one part",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; all = ( { event = "a"; } ); } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: 'all' must be a list of 2 to 16 parts, e.g. all = ( { event = \"a\"; }, { run = \"b\"; } );",
         fix='two parts or more, or the part alone without `all`'),
    dict(what="a trigger's payloads without a debounce",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; event = "a"; payloads = "all"; } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: 'payloads' needs a 'debounce' (e.g. debounce = \"30s\";)",
         fix='add `debounce`, or leave `payloads` out (each event then starts its own run)'),
    dict(what="two triggers of one name",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; event = "a"; }, { name = "t"; event = "b"; } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: trigger \"t\" is defined twice (first at line 3)",
         fix='rename one'),
    dict(what="max_in_flight of 0",
         files={"workflows/w.cfg": wf('    { id = "a"; command = ["true"]; }', '  triggers = ( { name = "t"; event = "a"; max_in_flight = 0; } );\n')},
         cmd=["check"], error="{host}/workflows/w.cfg:3: error: 'max_in_flight' must be an integer from 1 to 1000000",
         fix='1 or more; leave it out for no bound'),
    # --- emitting events ---------------------------------------------------
    dict(what="an event name with a space",
         files={}, cmd=["emit", "file landed"], error='switchyard: emit: event name "file landed": may hold only letters, digits and . _ - : /',
         fix='letters, digits and `. _ - : /`'),
    dict(what="an event payload that is not an object",
         files={}, cmd=["emit", "landed", "--data", "[1]"], error='switchyard: emit: --data must be a JSON object',
         fix='an object: `{"key": value}`'),
    # --- submitting --------------------------------------------------------
    dict(what="an initial context that is not JSON",
         files={}, cmd=["submit", "good", "--context", "{nope"], error="switchyard: submit: --context {nope: string or '}' expected near 'nope' (line 1, column 5)",
         fix='valid JSON (`@FILE` reads it from a file)'),
    dict(what="an initial context that is not an object",
         files={}, cmd=["submit", "good", "--context", "[1,2]"], error='switchyard: submit: --context must be a JSON object',
         fix='an object: `{"key": value}`'),
    dict(what="an initial context over max_context_bytes",
         files={"switchyard.cfg": BASE_CFG + "max_context_bytes = 1024;\n",
                "big.json": '{"k": "%s"}' % ("x" * 2000)},
         cmd=["submit", "good", "--context", "@big.json"], error='switchyard: submit: the context is 2008 bytes, more than max_context_bytes 1024 ({host}/switchyard.cfg:5)',
         fix='pass less, or raise `max_context_bytes`'),
    dict(what="a workflow that does not exist",
         files={}, cmd=["submit", "nosuch"], error="switchyard: submit: no workflow 'nosuch' in the workflow directories (1 known)",
         fix='`switchyard workflows` lists them; a file with errors is skipped (see `check`)'),
    dict(what="a submit key window that is not a duration",
         files={"switchyard.cfg": BASE_CFG + 'submit_key_window = "a day";\n'},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: \'submit_key_window\' bad duration "a day": expected a number such as "250ms", "5s", "1m", "2h" (at least 1ms)',
         fix='a duration such as `"24h"`'),
    dict(what="a submit key with a space",
         files={}, cmd=["submit", "good", "--key", "order 17"], error="switchyard: submit: --key: the key holds byte 0x20 at offset 5: use printable ASCII without spaces",
         fix='1 to 256 printable ASCII bytes, such as `order-17`'),
    dict(what="a submit priority out of range",
         files={}, cmd=["submit", "good", "--priority", "2000000"], error="switchyard: submit: --priority: '2000000' is not an integer from -1000000 to 1000000",
         fix='an integer from -1000000 to 1000000; higher starts first'),
    dict(what="a run priority that is not a number",
         files={}, cmd=["run", "good", "--priority", "high"], error="switchyard: run: --priority: 'high' is not an integer from -1000000 to 1000000",
         fix='an integer from -1000000 to 1000000; higher starts first'),
    dict(what="a backfill time it cannot read",
         files={}, cmd=["backfill", "good", "--from", "last week", "--to", "2026-01-02"], error="switchyard: backfill: --from 'last week': expected a UTC time such as 2026-11-20 or 2026-11-20T06:00:00Z",
         fix='a UTC date, or date and time'),
    dict(what="a backfill of a workflow without a schedule",
         files={}, cmd=["backfill", "good", "--from", "2026-01-01", "--to", "2026-01-02"], error="switchyard: backfill: workflow 'good' has no schedule: there are no ticks to backfill",
         fix='give the workflow a `schedule`, or backfill one that has one'),
    dict(what="a number on the command line that is not one",
         files={}, cmd=["runs", "--limit", "abc"], error="switchyard: runs: --limit 'abc': expected a whole number from 1 to 1000000000",
         fix='a whole number in the range named'),
    # --- the slurm plugin's settings -------------------------------------
    dict(what="the slurm plugin: an unknown `accounting`",
         files={"switchyard.cfg": slurm_cfg('accounting = "maybe";'), "plugins/slurm.so": ("copy", "slurm")},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: executor \'hpc\': plugin \'slurm\' refused its settings: accounting: must be "auto", "sacct" or "none", not "maybe"',
         fix='"auto" (sacct until it says there is no slurmdbd), "sacct", or "none" (docs/configuration.md)'),
    dict(what="the slurm plugin: `max_submitting` out of range",
         files={"switchyard.cfg": slurm_cfg("max_submitting = 0;"), "plugins/slurm.so": ("copy", "slurm")},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: executor 'hpc': plugin 'slurm' refused its settings: max_submitting: must be an integer between 1 and 32, got 0",
         fix="sbatch commands at once per instance: 1 to 32"),
    dict(what="the slurm plugin: `lost_after` not a duration",
         files={"switchyard.cfg": slurm_cfg('lost_after = "-1s";'), "plugins/slurm.so": ("copy", "slurm")},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: executor \'hpc\': \'lost_after\': bad duration "-1s": expected a number such as "250ms", "5s", "1m", "2h"',
         fix='a duration such as "2m"'),
    dict(what="the slurm plugin: a task's `time` under a minute",
         files={"switchyard.cfg": slurm_cfg("") + 'routes = "routes.cfg";\n', "plugins/slurm.so": ("copy", "slurm"),
                "routes.cfg": 'routes = { default = "default"; rules = ( { match = "*::s::**"; executor = "hpc"; } ); };\n',
                "workflows/w.cfg": 'workflow = { name = "s::w"; tasks = ( { id = "a"; shell = "true"; time = "30s"; } ); };\n'},
         cmd=["check"], error="{host}/workflows/w.cfg:1: error: task 'a' (executor 'hpc', plugin 'slurm'): time: must be a duration of at least 1m, got 30s",
         fix="Slurm keeps time limits in whole minutes: 1m or more"),
    # --- plugins (strict_plugins = true: a refused plugin is an error) -----
    dict(what="a plugin file that is not an ELF object",
         files={"switchyard.cfg": STRICT_CFG, "plugins/text.so": "not a shared object\n", "plugins/text.so#": ("mode", 0o755)},
         cmd=["check"], error='{host}/plugins/text.so: error: plugin refused: not an ELF object (strict_plugins = true)',
         fix='remove it from the plugin directory'),
    dict(what="a plugin without the entry symbol",
         files={"switchyard.cfg": STRICT_CFG, "plugins/noentry.so": ("copy", "noentry")},
         cmd=["check"], error='{host}/plugins/noentry.so: error: plugin refused: no sy_executor_entry symbol (not a Switchyard executor, or built without SY_EXPORT) (strict_plugins = true)',
         fix='build it with the SDK (`SY_EXECUTOR_ENTRY`)'),
    dict(what="a plugin built for another ABI major",
         files={"switchyard.cfg": STRICT_CFG, "plugins/abi2.so": ("copy", "abi2")},
         cmd=["check"], error="{host}/plugins/abi2.so: error: plugin refused: built for executor ABI 2.0, this host speaks 1...; rebuild it against this host's SDK (strict_plugins = true)",
         fix="rebuild it against this host's SDK"),
    dict(what="a plugin that needs a newer minor than the host's",
         files={"switchyard.cfg": STRICT_CFG, "plugins/newminor.so": ("copy", "newminor")},
         cmd=["check"], error="{host}/plugins/newminor.so: error: plugin refused: needs executor ABI 1..., newer than this host's 1...; upgrade the host or rebuild the plugin (strict_plugins = true)",
         fix='upgrade the host, or rebuild the plugin for this minor'),
    dict(what="a plugin whose descriptor is too small",
         files={"switchyard.cfg": STRICT_CFG, "plugins/small.so": ("copy", "small")},
         cmd=["check"], error='{host}/plugins/small.so: error: plugin refused: descriptor too small: 56 bytes, ABI 1.0 needs at least 112 (strict_plugins = true)',
         fix="rebuild it against this host's SDK"),
    dict(what="a plugin file others may write",
         files={"switchyard.cfg": STRICT_CFG, "plugins/ww.so": ("copy", "good"), "plugins/ww.so#": ("mode", 0o757)},
         cmd=["check"], error='{host}/plugins/ww.so: error: plugin refused: {host}/plugins/ww.so is writable by others (run: chmod go-w {host}/plugins/ww.so) (strict_plugins = true)',
         fix='`chmod go-w` it, as the line says'),
    dict(what="a plugin directory others may write",
         files={"switchyard.cfg": STRICT_CFG, "plugins/good.so": ("copy", "good"), "plugins#": ("mode", 0o777)},
         cmd=["check"], error='{host}/plugins/good.so: error: plugin refused: {host}/plugins is writable by group and others (run: chmod go-w {host}/plugins) (strict_plugins = true)',
         fix='`chmod go-w` the directory, as the line says'),
    # --- the admin API: its group, the tokens file, audit_keep --------------
    dict(what="an unknown key in the admin group",
         files={"switchyard.cfg": BASE_CFG + 'admin = { listen = "127.0.0.1:0"; tls = true; };\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: unknown key 'admin.tls' (known: ...)",
         fix="remove it, or spell one of the keys listed"),
    dict(what="a TLS certificate without its key",
         files={"switchyard.cfg": BASE_CFG + 'admin = { listen = "127.0.0.1:0"; tls_cert = "a.crt"; };\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'admin.tls_cert' needs 'admin.tls_key' too (TLS takes a certificate and its key)",
         fix="set both `admin.tls_cert` and `admin.tls_key`"),
    dict(what="a client CA without TLS",
         files={"switchyard.cfg": BASE_CFG + 'admin = { listen = "127.0.0.1:0"; tls_client_ca = "ca.crt"; };\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'admin.tls_client_ca' needs TLS: set 'admin.tls_cert' and 'admin.tls_key'",
         fix="client certificates need TLS: set the certificate and key too"),
    dict(what="admin.insecure that is not a boolean",
         files={"switchyard.cfg": BASE_CFG + 'admin = { listen = "127.0.0.1:0"; insecure = "yes"; };\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'admin.insecure' must be true or false",
         fix="`insecure = true;` (no quotes), and only for a network you trust"),
    dict(what="an admin.listen that is no address",
         files={"switchyard.cfg": BASE_CFG + 'admin = { listen = "localhost"; };\n'},
         cmd=["check"], error='{host}/switchyard.cfg:5: error: \'admin.listen\' must be "HOST:PORT" (e.g. "127.0.0.1:8787", "[::1]:8787") or "unix:PATH"',
         fix="`HOST:PORT` or `unix:PATH`"),
    dict(what="an admin.max_body out of range",
         files={"switchyard.cfg": BASE_CFG + 'admin = { listen = "127.0.0.1:0"; max_body = 10; };\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'admin.max_body' must be a size from 1024 to 67108864 bytes (an integer, or a string such as \"64KiB\")",
         fix="a size in the range named"),
    dict(what="an audit_keep under an hour",
         files={"switchyard.cfg": BASE_CFG + 'audit_keep = "10m";\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'audit_keep' must be a duration such as \"30s\" (at least 1h)",
         fix="a duration of at least `1h` (default `90d`)"),
    dict(what="an events_keep under a day",
         files={"switchyard.cfg": BASE_CFG + 'events_keep = "12h";\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'events_keep' must be a duration such as \"30s\" (at least 1d)",
         fix="a duration of at least `1d`, an event key's window (default `7d`)"),
    dict(what="an events_keep that is no duration",
         files={"switchyard.cfg": BASE_CFG + 'events_keep = "soon";\n'},
         cmd=["check"], error="{host}/switchyard.cfg:5: error: 'events_keep' bad duration \"soon\": expected a number such as \"250ms\", \"5s\", \"1m\", \"2h\" (at least 1d)",
         fix="a duration such as `\"7d\"`"),
    dict(what="a tokens file line that is not NAME ROLE DIGEST",
         files={"switchyard.cfg": BASE_CFG + TOKENS_ADMIN, "tokens": "ci operate\n", "tokens#": ("mode", 0o600)},
         cmd=["token", "new", "--role", "read", "--name", "x"],
         error="switchyard: token: {host}/tokens:1: expected NAME ROLE SHA256-HEX",
         fix="one token a line, as `switchyard token new` writes them; `#` comments"),
    dict(what="a tokens file with an unknown role",
         files={"switchyard.cfg": BASE_CFG + TOKENS_ADMIN, "tokens": "ci root %s\n" % DIGEST, "tokens#": ("mode", 0o600)},
         cmd=["token", "new", "--role", "read", "--name", "x"],
         error="switchyard: token: {host}/tokens:1: the role must be read, operate or admin",
         fix="`read`, `operate` or `admin`"),
    dict(what="a tokens file digest that is not SHA-256 hex",
         files={"switchyard.cfg": BASE_CFG + TOKENS_ADMIN, "tokens": "# ops\nci read %s\n" % DIGEST.upper(), "tokens#": ("mode", 0o600)},
         cmd=["token", "new", "--role", "read", "--name", "x"],
         error="switchyard: token: {host}/tokens:2: the digest must be 64 lowercase hex digits (SHA-256)",
         fix="the digest `switchyard token new` wrote (the host never holds a token in clear)"),
    dict(what="a tokens file naming one token twice",
         files={"switchyard.cfg": BASE_CFG + TOKENS_ADMIN, "tokens": "ci read %s\nci admin %s\n" % (DIGEST, DIGEST), "tokens#": ("mode", 0o600)},
         cmd=["token", "new", "--role", "read", "--name", "x"],
         error="switchyard: token: {host}/tokens:2: a name given twice",
         fix="one line per name: the audit trail tells tokens by their names"),
    dict(what="a tokens file others may read",
         files={"switchyard.cfg": BASE_CFG + TOKENS_ADMIN, "tokens": "ci read %s\n" % DIGEST, "tokens#": ("mode", 0o644)},
         cmd=["token", "new", "--role", "read", "--name", "x"],
         error="switchyard: token: admin.tokens_file {host}/tokens: others may read it (chmod 600)",
         fix="`chmod 600` it", as_user=True),
    dict(what="a tokens file that is bad when serve starts",
         files={"switchyard.cfg": BASE_CFG + TOKENS_ADMIN, "tokens": "ci read\n", "tokens#": ("mode", 0o600)},
         cmd=["serve"],
         error="switchyard: serve: {host}/tokens:1: expected NAME ROLE SHA256-HEX",
         fix="fix the line named; at a reload the tokens read before stay in force and the log says why"),
]


def env_paths():
    return {
        "switchyard": os.environ["SWITCHYARD"],
        "thread": os.environ["SY_THREAD_PLUGIN"],
        "plugins": os.environ["SY_TEST_PLUGIN_DIR"],
        "tasklib": os.environ["SY_TASKLIB"],
        "slurm": os.environ["SY_SLURM_PLUGIN"],
    }


def sha(path):
    try:
        return hashlib.sha256(open(path, "rb").read()).hexdigest()
    except OSError:
        return None


def prepare(p):
    """A host whose store holds one run of `good`: the template rows copy."""
    tmpl = tempfile.mkdtemp(prefix="sy-bad-")
    os.chmod(tmpl, 0o700)
    for d in ("plugins", "workflows", "var"):
        os.mkdir(os.path.join(tmpl, d))
    shutil.copy(p["thread"], os.path.join(tmpl, "plugins", "thread.so"))
    os.chmod(os.path.join(tmpl, "plugins", "thread.so"), 0o755)
    open(os.path.join(tmpl, "switchyard.cfg"), "w").write(BASE_CFG)
    open(os.path.join(tmpl, "workflows", "good.cfg"), "w").write(GOOD_WF)
    r = subprocess.run([p["switchyard"], "--config", os.path.join(tmpl, "switchyard.cfg"),
                        "submit", "good"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("cannot prepare the template host: " + r.stdout + r.stderr)
    return tmpl


def plant(host, files, p):
    for rel, v in files.items():
        path = os.path.join(host, rel.rstrip("#"))
        if isinstance(v, tuple) and v[0] == "mode":
            os.chmod(path, v[1])
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(v, tuple) and v[0] == "copy":
            src = p[v[1]] if v[1] in ("tasklib", "slurm") else os.path.join(p["plugins"], v[1] + ".so")
            shutil.copy(src, path)
            os.chmod(path, 0o755)
        elif isinstance(v, bytes):
            open(path, "wb").write(v)
        else:
            open(path, "w").write(v)


def run_row(row, tmpl, p, wrap):
    host = tempfile.mkdtemp(prefix="sy-bad-row-")
    shutil.rmtree(host)
    shutil.copytree(tmpl, host, symlinks=True)
    os.chmod(host, 0o700)
    plant(host, row["files"], p)
    db = os.path.join(host, "var", "sy.db")
    before = sha(db)
    argv = wrap + [p["switchyard"], "--config", os.path.join(host, "switchyard.cfg")] + row["cmd"]
    env = dict(os.environ, PATH="/usr/bin:/bin")
    r = subprocess.run(argv, capture_output=True, cwd=host, env=env)
    out = (r.stdout + r.stderr).decode("utf-8", "replace")
    after = sha(db)
    for d, _, fs in os.walk(host):
        os.chmod(d, 0o700)
    shutil.rmtree(host, ignore_errors=True)
    return r.returncode, out.replace(host, "{host}"), before == after


def markdown():
    lines = ["| what went wrong | what the host says | what to do |", "|---|---|---|"]
    for row in ROWS:
        err = row["error"].replace("{host}", "/srv/sy").replace("1...", "1.N")
        err = err.replace("|", "\\|")
        tick = "``" if "`" in err else "`"
        pad = " " if tick == "``" else ""
        lines.append("| %s | %s%s%s%s%s | %s |" % (row["what"], tick, pad, err, pad, tick,
                                                  row["fix"]))
    return "\n".join(lines) + "\n"


def matches(want, lines):
    """`want` is one whole line of the output; "..." in it stands for any
    text (the lists of known keys grow with the host)."""
    pattern = "^" + ".*".join(re.escape(p) for p in want.split("...")) + "$"
    return any(re.match(pattern, line) for line in lines)


def main():
    if "--markdown" in sys.argv:
        sys.stdout.write(markdown())
        return 0
    p = env_paths()
    wrap = os.environ.get("SY_WRAP", "").split()
    tmpl = prepare(p)
    n = failed = 0
    try:
        for row in ROWS:
            if row.get("as_user") and os.geteuid() == 0:
                n += 1
                print("ok %d - %s # SKIP root may write a read-only file" % (n, row["what"]))
                continue
            rc, out, same = run_row(row, tmpl, p, wrap)
            n += 1
            want = row["error"]
            problems = []
            if rc not in (1, 2):
                problems.append("exit status %d, expected 1 or 2" % rc)
            if want is None:
                problems.append("no expected line yet")
            elif not matches(want, out.splitlines()):
                problems.append("expected the line: " + want)
            if "Sanitizer" in out or "internal error" in out:
                problems.append("a sanitizer or internal error")
            if not same:
                problems.append("the store changed")
            if problems:
                failed += 1
                print("not ok %d - %s" % (n, row["what"]))
                for pr in problems:
                    print("#   " + pr)
                for line in out.splitlines()[:6]:
                    print("#   | " + line)
            else:
                print("ok %d - %s" % (n, row["what"]))
        readme = os.path.join(os.environ["SY_SRCDIR"], "docs", "troubleshooting.md")
        text = open(readme).read()
        begin, end = "<!-- bad-inputs:begin -->\n", "<!-- bad-inputs:end -->"
        n += 1
        if begin in text and end in text and \
                text.split(begin, 1)[1].split(end, 1)[0].strip() == markdown().strip():
            print("ok %d - docs/troubleshooting.md's table is this table" % n)
        else:
            failed += 1
            print("not ok %d - docs/troubleshooting.md's table is this table" % n)
            print("#   regenerate it: python3 tests/integration/bad_inputs.py --markdown")
    finally:
        shutil.rmtree(tmpl, ignore_errors=True)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
