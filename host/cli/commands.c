/* The table of commands and their help: `switchyard help [CMD]`,
 * `switchyard CMD --help`.  One table, so the usage line, the help and
 * the dispatch in main.c can never disagree. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const sy_cli_command commands[] = {
    {"check", sy_cmd_check, "",
     "validate the config, store, routes, plugins, instances and workflows",
     "Loads everything a host would and checks it without running anything:\n"
     "the store URL (and that its directory can be written, without creating\n"
     "the database), plugin and workflow directories, routing rules, every\n"
     "plugin and instance, every workflow, the executables of command tasks\n"
     "(on PATH, or relative to the task's directory) and the libraries and\n"
     "symbols of function tasks.  Prints FILE:LINE: error: ... and\n"
     "FILE:LINE: warning: ... lines, then a summary.\n"
     "Exit: 0 valid, 1 errors.\n", false},
    {"route", sy_cmd_route, "NAMESPACE [--quiet | --json]",
     "show which executor instance gets NAMESPACE, and why",
     "  --quiet, -q   print the instance name alone (an overflow list: one a line)\n"
     "  --json        print {\"namespace\", \"executor\", \"executors\", \"rule\",\n"
     "                \"tried\"}\n"
     "Exit: 0; 2 for a bad namespace or config.\n", true},
    {"plugins", sy_cmd_plugins, "[-v] [--json]",
     "list every plugin found: loaded, or refused and why",
     "  -v, --verbose  add each plugin's instance settings and task parameters\n"
     "                 (with --host: each instance's figures, its plugin's metrics)\n"
     "  --json         print an array of {\"name\", \"version\", \"abi\", \"status\",\n"
     "                 \"path\", \"reason\"} and the directories searched\n"
     "With --host, the serving host's instances and their health come first.\n"
     "Exit: 0; 2 for a bad config.\n", true},
    {"workflows", sy_cmd_workflows, "[--json]",
     "list the workflows of the workflow directories",
     "  --json   print an array of {\"tenant\", \"name\", \"tasks\", \"schedule\",\n"
     "           \"file\", \"hash\"}\n"
     "A workflow file with errors is reported and left out.\n"
     "Exit: 0; 1 when a workflow file has errors; 2 for a bad config.\n", true},
    {"schedules", sy_cmd_schedules, "[--count N] [--json]",
     "each scheduled workflow: its zone, catch-up, last tick and next ones",
     "  --count N, -n N  the next N fire times (default 3; 0 to 1000)\n"
     "  --json           print an array of {\"tenant\", \"name\", \"schedule\",\n"
     "                   \"timezone\", \"catchup\", \"catchup_max\", \"last_tick\",\n"
     "                   \"last_run\", \"next\", \"error\"}\n"
     "Times are ISO 8601 in the workflow's zone.  The last tick is the latest\n"
     "one a host fired, from the store; `serve` fires the schedules.\n"
     "Exit: 0; 1 the store failed; 2 for a bad config.\n", false},
    {"backfill", sy_cmd_backfill, "WORKFLOW --from T1 --to T2 [--max-active N] [--dry-run]",
     "one run per past tick of a schedule that has none yet",
     "  --from T1, --to T2  the range, both included: UTC times such as\n"
     "                      2026-11-20 or 2026-11-20T06:00:00Z; T2 not after now\n"
     "  --max-active N      at most N of the runs it submitted not finished at\n"
     "                      once (default 1): it waits for a host (serve) to\n"
     "                      finish them\n"
     "  --dry-run           list each tick and its run, or that it would run;\n"
     "                      submit nothing\n"
     "A tick the live schedule or an earlier backfill fired is not fired\n"
     "again, and the live schedule never fires a tick a backfill did.  The\n"
     "runs start with the context a scheduled run has.\n"
     "Exit: 0; 1 a store error; 2 usage or config.\n", false},
    {"triggers", sy_cmd_triggers, "[--json]",
     "each workflow trigger: its last firing, what is pending, what it passed over and why",
     "  --json   print an array of {\"tenant\", \"workflow\", \"name\", \"all\",\n"
     "           \"parts\" (each with \"pending\"), \"debounce_ms\", \"payloads\",\n"
     "           \"max_in_flight\", \"since\", \"firings\", \"last_fired\",\n"
     "           \"last_run\", \"in_flight\", \"passed\"}\n"
     "Pending: events and runs a part has seen that no firing consumed yet\n"
     "(for an `all`, the parts still waiting for theirs).  Passed over: the\n"
     "last events whose payload failed the part's `when`, with the condition.\n"
     "`serve` fires the triggers; see docs/events.md.\n"
     "Exit: 0; 1 the store failed; 2 for a bad config.\n", false},
    {"run", sy_cmd_run, "WORKFLOW [--context JSON|@FILE] [--priority N] [--quiet] "
                        "[--progress-every SECONDS] [--metrics-file PATH]",
     "run one workflow to its end here, with progress",
     "  --context JSON|@FILE     the run's initial context, a JSON object\n"
     "                           (default {})\n"
     "  --priority N             added to each task's priority, -1000000 to\n"
     "                           1000000 (default 0)\n"
     "  --quiet, -q              print neither progress nor task lines\n"
     "  --progress-every SECONDS when not on a terminal, a progress line at\n"
     "                           most this often (default 10; 0: after every\n"
     "                           task)\n"
     "  --metrics-file PATH      when the run ends, write the host's metrics\n"
     "                           (Prometheus text format) to PATH\n"
     "On a terminal one progress line is rewritten in place: tasks done of\n"
     "the total, running, failed, skipped, tasks per second and the elapsed\n"
     "time.  Exit: 0 completed, 1 failed or lease lost, 2 usage or config.\n", false},
    {"submit", sy_cmd_submit, "WORKFLOW [--context JSON|@FILE] [--priority N] [--key KEY]",
     "record a run for a host (`serve`) to pick up",
     "  --context JSON|@FILE  the run's initial context (default {})\n"
     "  --priority N          added to each of its tasks' priority, so that it\n"
     "                        goes ahead of a backlog: -1000000 to 1000000\n"
     "                        (default 0); kept with the run\n"
     "  --key KEY             record the run once: a KEY a run of the workflow\n"
     "                        was submitted under within submit_key_window\n"
     "                        prints that run's id and records nothing\n"
     "Prints the run id.  Refused for an in-memory store (nothing would keep\n"
     "the run) and for a context over max_context_bytes.\n"
     "Exit: 0; 2 usage or config.\n", true},
    {"emit", sy_cmd_emit, "NAME [--data JSON|@FILE] [--key KEY]",
     "record a named event, which starts the workflows whose triggers wait for it",
     "  --data JSON|@FILE  the event's payload, a JSON object (default {})\n"
     "  --key KEY          an event of the same name and key recorded within\n"
     "                     24 hours is acknowledged and not recorded again\n"
     "Prints the event's id (the earlier event's, for a key seen already).\n"
     "The event is in the store when the command returns.  Refused for an\n"
     "in-memory store.  See docs/events.md.\n"
     "Exit: 0; 1 the store failed; 2 usage, a bad name, key or payload.\n", true},
    {"status", sy_cmd_status, "RUN_ID [--json] [--task TASK] [--all] [--limit N] [--offset N]",
     "a run and each of its tasks",
     "  --json       print the run as JSON, errors and outputs in full (with\n"
     "               --task: that task's object)\n"
     "  --task TASK  one task in full: its state, attempts, executor, host,\n"
     "               whole error (stderr included) and output; for a mapped\n"
     "               task, each of its elements too\n"
     "  --all        every element of every mapped task\n"
     "  --limit N    list at most N tasks (0: every one; default 1000, with\n"
     "               --json every one), in the workflow's order, with the\n"
     "               counts by state of all of them\n"
     "  --offset N   from the task N places after the first (default 0)\n"
     "The table shows the last line of each error only; `switchyard logs`\n"
     "shows what the attempts wrote.  A mapped task is summed up in one\n"
     "line (its elements by state) unless asked.\n"
     "Exit: 0; 1 unknown run or task.\n", true},
    {"runs", sy_cmd_runs, "[--limit N | --all] [--json]", "the latest runs",
     "  --limit N  the newest N runs (default 50; 1 to 1000000000)\n"
     "  --all      every run\n"
     "  --json     print an array of {\"run_id\", \"tenant\", \"workflow\",\n"
     "             \"status\", \"created\", \"started\", \"finished\",\n"
     "             \"duration_ms\", \"n_tasks\", \"tasks\", \"error\"}\n"
     "Exit: 0.\n", true},
    {"cancel", sy_cmd_cancel, "RUN_ID", "cancel a run",
     "A run no live host holds (Pending, released, or its host gone) is\n"
     "ended at once: running tasks Cancelled, the run Cancelled.  Otherwise\n"
     "the request is recorded and the host holding the run stops it.\n"
     "Exit: 0; 1 unknown or already ended.\n", true},
    {"retry", sy_cmd_retry,
     "RUN_ID [--task TASK] [--dry-run [--json]] [--detach] [--no-cache] [--quiet]",
     "run again what failed in a finished run, keeping what completed",
     "  --task TASK  run TASK again and every task downstream of it, even\n"
     "               those that completed\n"
     "  --dry-run    print what would run again and what is kept; change\n"
     "               nothing\n"
     "  --json       with --dry-run: print {\"run_id\", \"workflow\", \"status\",\n"
     "               \"task\", \"rerun\", \"kept\"}, each task as {\"id\",\n"
     "               \"index\", \"status\", \"attempts\"}\n"
     "  --detach     leave the run Pending for a host (serve) to take\n"
     "  --no-cache   run the tasks again even where their cache holds an\n"
     "               output for their key (they put their new one)\n"
     "  --quiet, -q  print neither the plan nor task lines\n"
     "Without --task: the tasks that Failed, were Cancelled or Skipped, or\n"
     "never ran.  The same run goes on: completed tasks keep their outputs\n"
     "(the tasks run again get them in their input), attempts are numbered\n"
     "after the earlier ones, and the run is run here to its end, as `run`\n"
     "does.  A run not finished is refused.\n"
     "Exit: 0 completed (or planned); 1 failed, unknown run or task, or not\n"
     "finished; 2 usage or config.\n", true},
    {"logs", sy_cmd_logs, "RUN_ID [TASK] [--attempt N] [--follow] [--json]",
     "what each attempt wrote on stdout and stderr",
     "  TASK         one task's attempts only\n"
     "  --attempt N  attempt N only\n"
     "  --follow, -f print new attempts' logs as they are written, until\n"
     "               the run ends\n"
     "  --json       print {\"run_id\", \"status\", \"logs\": [{\"task\",\n"
     "               \"attempt\", \"stream\", \"text\", \"size\", \"dropped\",\n"
     "               \"at\"}]} (with --follow: one log object a line)\n"
     "Each stream is kept up to log_limit bytes (default 64KiB): its head\n"
     "and tail, with a line \"[... N bytes dropped ...]\" between them.\n"
     "Stdout is kept when it is not the task's output (a failed command).\n"
     "Exit: 0; 1 unknown run or task.\n", true},
    {"graph", sy_cmd_graph, "WORKFLOW | --run RUN", "the workflow's DAG in Graphviz DOT",
     "Each task is labelled with the executor instance it routes to.\n"
     "--run RUN: the DAG a run started with (its stored definition, whatever\n"
     "the file says now), each task labelled with the instance its latest\n"
     "attempt went to (- when none) and its state, and filled by state.\n"
     "Exit: 0; 1 unknown run; 2 usage.\n"
     "Example: switchyard graph etl | dot -Tpng > etl.png\n", false},
    {"serve", sy_cmd_serve,
     "[--exit-when-idle] [--metrics-file PATH [--metrics-interval DURATION]]",
     "the long-running host: runs submitted work, resumes after restarts",
     "  --exit-when-idle  stop when nothing is left to do\n"
     "  --metrics-file PATH  write the Prometheus metrics (text format) to\n"
     "                    PATH every interval and when stopping, whole each\n"
     "                    time (temporary file + rename): for node_exporter's\n"
     "                    textfile collector (docs/metrics.md)\n"
     "  --metrics-interval DURATION  how often (default 15s)\n"
     "The first SIGTERM or SIGINT drains (at most shutdown_grace); the\n"
     "second cancels the attempts in flight, their tasks back to Ready, and\n"
     "exits 130; the third exits at once.  SIGHUP reloads the configuration\n"
     "(routes, instances, workflows, and plugins added to the plugin directories).\n"
     "A workflow file with errors is reported and skipped; the others run.\n"
     "Under systemd (switchyard.service, Type=notify) it reports READY=1,\n"
     "STATUS=, RELOADING=1, STOPPING=1 and WATCHDOG=1 on NOTIFY_SOCKET.\n"
     "With an admin group in the configuration it answers the admin HTTP API\n"
     "(docs/admin-api.md).\n", false},
    {"migrate", sy_cmd_migrate, "",
     "create the store's tables, or bring them to this build's schema",
     "Under a lock, so that hosts starting together never migrate twice.\n"
     "Exit: 0; 1 the store cannot be opened or migrated.\n", false},
    {"limits", sy_cmd_limits, "[--json]",
     "the slots of every key, pool and tenant bound, and the rate buckets",
     "Reads the store: every concurrency key, pool (pool:NAME) and tenant\n"
     "with max_running (tenant:NAME) with the slots live holders hold, of\n"
     "how many (a pool's size, a tenant's bound), and each holder's run,\n"
     "task index, attempt token, slots and host; then the tasks waiting for\n"
     "it, in the order it will be granted (queue position, run, task,\n"
     "tenant, priority, slots, host).  A holder or waiter counts while its\n"
     "host's claim on the run lives (docs/flow-control.md).  Then every rate\n"
     "limit's bucket (rate:KEY): its whole tokens now, its burst, rate and\n"
     "interval as its last take said, and the ms until its next token (none\n"
     "when full).  Over --host it reads GET /api/v1/limits.  Pools and\n"
     "bounds change by a reload.\n"
     "  --json  print {\"keys\": [{\"key\", \"held\", \"limit\", \"holders\":\n"
     "          [{\"run\", \"task\", \"element\", \"token\", \"slots\",\n"
     "          \"host\", \"since\"}], \"waiting\", \"waiters\": [{\"position\",\n"
     "          \"run\", \"task\", \"element\", \"tenant\", \"priority\",\n"
     "          \"slots\", \"host\", \"since\"}]}], \"rates\": [{\"key\",\n"
     "          \"tokens\", \"rate\", \"interval_ms\", \"burst\",\n"
     "          \"next_token_ms\"}]} (next_token_ms null when full)\n"
     "Exit: 0; 1 the store or host failed; 2 usage.\n", true},
    {"gc", sy_cmd_gc, "--older-than DURATION [--batch N]",
     "delete runs that ended longer ago than DURATION",
     "  --older-than DURATION  e.g. 30d; finished runs older than this go\n"
     "  --batch N              runs deleted per transaction (default 500)\n"
     "Also deletes audit rows older than audit_keep, and named events,\n"
     "settled trigger items and ended firings older than events_keep that\n"
     "no trigger of the workflows still needs.\n"
     "Exit: 0; 1 the store failed; 2 a bad option.\n", false},
    {"token", sy_cmd_token, "new --role read|operate|admin --name NAME",
     "make an admin API token with a role",
     "Adds the token's SHA-256 digest, with NAME and the role, to the\n"
     "configuration's admin.tokens_file (made mode 0600) and prints the\n"
     "token, once: the host keeps only digests.  read: every GET; operate:\n"
     "also submit, cancel and retry; admin: also reload, drain and the audit\n"
     "trail.\n"
     "A running host reads the file when it starts and at each reload\n"
     "(SIGHUP, POST /api/v1/reload): a token taken out stops working.\n"
     "Exit: 0; 1 no admin.tokens_file, or NAME taken; 2 usage.\n", false},
    {"audit", sy_cmd_audit, "[--since DURATION] [--who NAME] [--action ACTION] [--limit N] "
                            "[--json]",
     "who changed what: the audit trail, newest first",
     "  --since DURATION  only changes this recent (e.g. 24h, 7d)\n"
     "  --who NAME        only those of this token name or local user\n"
     "  --action ACTION   only these: submit, run, cancel, retry, reload,\n"
     "                    drain, token new, gc\n"
     "  --limit N         at most N rows (default 50; 1 to 100000)\n"
     "  --json            print an array of {\"id\", \"at\", \"who\", \"role\",\n"
     "                    \"action\", \"target\", \"origin\", \"ok\", \"status\",\n"
     "                    \"detail\"}\n"
     "Every change through the admin API (refused ones included) and the\n"
     "command line is recorded: the token's name and role or the local user,\n"
     "the client's address (\"cli\", \"signal\" here), the HTTP status and the\n"
     "error or what was made.  Rows older than audit_keep (default 90d) are\n"
     "deleted by `serve` and `gc`.  Over --host it needs an admin token.\n"
     "Exit: 0; 1 the store or host failed; 2 usage.\n", true},
    {"drain", sy_cmd_drain, "",
     "stop the serving host at --host as its first SIGTERM does",
     "POST /api/v1/drain (an admin token): the host starts no new attempt,\n"
     "lets the running ones finish within its shutdown grace, and exits.\n"
     "Prints what it waits for.  Only over --host: a host on this machine\n"
     "drains on SIGTERM.\n"
     "Exit: 0; 1 the host refused (already draining) or cannot be reached;\n"
     "2 usage, or no --host.\n", true},
    {"help", sy_cmd_help, "[COMMAND]", "this list, or one command's help",
     "Also: switchyard COMMAND --help.  The manual: man switchyard.\n", false},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

const sy_cli_command *sy_cli_find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

void sy_cli_remote_names(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_COMMANDS && at < len; i++)
        if (commands[i].remote) {
            int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", commands[i].name);
            if (n < 0)
                break;
            at += (size_t)n;
        }
}

void sy_cli_usage(FILE *out)
{
    fprintf(out,
            "usage: switchyard [--config FILE] COMMAND [ARGS]\n"
            "       switchyard --host URL [--token-file FILE] [--ca-file FILE]\n"
            "                  [--cert FILE [--key FILE]] COMMAND [ARGS]\n\n"
            "  --config FILE  the configuration (default: $SWITCHYARD_CONFIG, "
            "else ./switchyard.cfg)\n"
            "  --host URL     talk to a serving host's admin API (http://HOST:PORT,\n"
            "                 https://HOST:PORT or unix:PATH) instead of the store: status, runs, submit,\n"
            "                 cancel, retry, logs, workflows, route, plugins, audit,\n"
            "                 limits, drain\n"
            "  --token-file FILE  the bearer token for changes over --host (default:\n"
            "                 $SWITCHYARD_TOKEN_FILE; mode 0600)\n"
            "  --ca-file FILE  the CA (PEM) an https --host is verified against\n"
            "                 (default: the system's)\n"            "  --cert FILE    a client certificate (PEM) for an https --host that\n"
            "                 asks for one (admin.tls_client_ca)\n"
            "  --key FILE     its key (PEM, mode 0600; default: in --cert's file)\n"
            "  --version      the version, the executor ABI and the malloc\n"
            "\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`switchyard help COMMAND` or `switchyard COMMAND --help` for one "
                 "command; `man switchyard` for the manual.\n");
}

void sy_cli_command_help(const sy_cli_command *c, FILE *out)
{
    fprintf(out, "usage: switchyard [--config FILE] %s%s%s\n\n%s.\n\n%s", c->name,
            c->args[0] ? " " : "", c->args, c->summary, c->details);
    if (c->remote)
        fprintf(out, "With --host URL [--token-file FILE] (before the command), over a\n"
                     "serving host's admin API instead of the store.\n");
}

int sy_cmd_help(const sy_cli *cli, int argc, char **argv)
{
    (void)cli;
    if (argc == 0) {
        sy_cli_usage(stdout);
        return SY_EXIT_OK;
    }
    if (argc > 1)
        return sy_cli_usage_error("help", "unexpected argument '%s'", argv[1]);
    const sy_cli_command *c = sy_cli_find(argv[0]);
    if (!c)
        return sy_cli_usage_error("help", "no command '%s' (`switchyard help` lists them)",
                                  argv[0]);
    sy_cli_command_help(c, stdout);
    return SY_EXIT_OK;
}
