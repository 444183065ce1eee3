/* test_cli_util.h -- running the built `fleet` CLI as a user does (its
 * output and exit code), a blocking HTTP client for the dashboard, and
 * headless Chromium; shared by test_cli.c, test_dash.c and
 * test_dash_access.c. */
#ifndef FLEET_TEST_CLI_UTIL_H
#define FLEET_TEST_CLI_UTIL_H

#include <stdint.h>
#include <sys/types.h>

/* tests/CMakeLists.txt passes the CLI's path when tools are built. */
#ifndef FLEET_CLI_PATH
#define FLEET_CLI_PATH "/nonexistent"
#endif

typedef struct {
  int status; /* exit code, or 128 + signal */
  char out[65536];
  char err[4096];
} cli_run_t;

/* Skips the test when the CLI is not built. */
void cli_required(void);

/* Starts the program `path` with `argv` (argv[0] first, NULL ended),
 * standard input from /dev/null, FLEET_URL and REDIS_URL unset and then
 * `env_name` set to `env_value` (when not NULL), its output going to
 * files named after `tag`. */
pid_t cli_spawn_prog(const char *path, const char *const *argv,
                     const char *env_name, const char *env_value,
                     const char *tag);
/* Starts `fleet` with `args` (NULL ended; argv[0] is added), as
 * cli_spawn_prog() does. */
pid_t cli_spawn(const char *const *args, const char *tag);
/* Waits for it and reads its output. */
void cli_reap(pid_t pid, const char *tag, cli_run_t *r);
/* The same, but kills it (SIGKILL, status -1: it hung) once `limit_ms`
 * have passed; 0 waits for ever. */
void cli_reap_within(pid_t pid, const char *tag, cli_run_t *r,
                     uint64_t limit_ms);
/* Both: runs `fleet url... args` to its end. */
void cli_run(cli_run_t *r, const char *const *args);
/* The same with --url `url` --prefix `prefix` in front of `args`, and
 * asserting the exit code. */
void cli_run_ok(cli_run_t *r, const char *url, const char *prefix,
                const char *const *args);
/* What the spawned `tag` printed on stdout so far. */
void cli_read_out(const char *tag, char *buf, size_t cap);
/* Number of lines of `s`. */
int cli_lines(const char *s);

/* Starts `args` (a long-running server that prints "<what>
 * http://127.0.0.1:PORT..." first, as `fleet dash` and `fleet metrics`
 * do) and returns the port; cli_stop_server() stops it with SIGINT and
 * asserts that it exited 0. */
int cli_spawn_server(const char *const *args, const char *tag, const char *what,
                     pid_t *pid);
void cli_stop_server(pid_t pid, const char *tag);

/* One HTTP request to 127.0.0.1:`port`; the full response (head and body)
 * goes to `resp`. Returns the status code. `extra` is added to the
 * headers (may be NULL). */
int cli_http(int port, const char *method, const char *path, const char *extra,
             char *resp, size_t cap);

/* The path of Debian's chromium ($FLEET_TEST_CHROMIUM first), or NULL. */
const char *cli_chromium_path(void);

/* Runs `chromium` headless on `url` with `what` ("--dump-dom" or
 * "--screenshot=FILE"), in a fresh profile removed after it: its exit
 * code into r->status, its stdout into r->out, and the lines of its log
 * that report the page's console messages (a script error, a request
 * refused by a Content-Security-Policy: ":CONSOLE" lines) into r->err. */
void cli_chromium_run(const char *chromium, const char *url, const char *what,
                      cli_run_t *r);
/* The window size of cli_chromium_run(), "WIDTH,HEIGHT" ("1280,1000"
 * unless a test sets it; set it back after). */
extern const char *cli_chromium_window;

/* Known cron contents, written and fired through the library (its own
 * loop and client on `url`, key prefix `prefix`): namespace "cron" holds
 * "tick" ("* * * * * *", UTC, a callback definition) fired `fires` times
 * by the scheduler node "cli-node" (the first fire completed as failed
 * with "boom", the others completed), and "nightly" ("30 2 * * *",
 * Europe/Berlin, queue "jobs", disabled); namespace "other" holds "hourly"
 * ("@hourly"). */
void cli_fixture_crons(const char *url, const char *prefix, int fires);

/* A warm pool node on its own loop and client: the node "wp-node" of pool
 * `name` with idle target `target`, its resources made at once by its
 * create callback. cli_fixture_warmpool() returns when `target` resources
 * are idle; the node holds the primary lease (60 s) until
 * cli_fixture_warmpool_close(), which gives it up. */
typedef struct cli_wp_s cli_wp_t;
cli_wp_t *cli_fixture_warmpool(const char *url, const char *prefix,
                               const char *name, uint32_t target);
void cli_fixture_warmpool_close(cli_wp_t *w);

#endif /* FLEET_TEST_CLI_UTIL_H */
