/* redis_fixture.h -- a private redis-server per test, on a free loopback port,
 * with the controls that integration and chaos tests need. */
#ifndef FLEET_TEST_REDIS_FIXTURE_H
#define FLEET_TEST_REDIS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>

typedef struct fleet_test_redis_s fleet_test_redis_t;

/* Returned by fleet_test_redis_start() when no redis-server is installed
 * (and FLEET_TEST_REQUIRE_REDIS is not 1): the test should skip. Distinct
 * from every -errno value. */
#define FLEET_TEST_REDIS_ENOTFOUND (-100000)

/* Starts a private redis-server:
 *
 *   redis-server --port P --bind 127.0.0.1 --dir D --save "" \
 *     --appendonly no --daemonize no --logfile D/redis.log <extra_args...>
 *
 * where P is a free loopback port and D a new directory under $TMPDIR (or
 * /tmp). `extra_args` is a NULL-terminated list, or NULL; later arguments
 * override earlier ones, so {"--appendonly", "yes", NULL} works, and a
 * "--requirepass" in it is used by fleet_test_redis_cmd(). The binary is
 * $FLEET_REDIS_SERVER if set, else redis-server from $PATH. The server runs in
 * its own process group and dies with the calling process.
 *
 * Waits up to about 5 s until the server answers PING. Returns 0 and sets
 * `*out`; FLEET_TEST_REDIS_ENOTFOUND if redis-server is not installed
 * (unless the environment has FLEET_TEST_REQUIRE_REDIS=1, which turns this
 * into -ENOENT); or another negative errno (-ETIMEDOUT, -ECHILD if the
 * server kept exiting at startup, -ENOMEM, ...). On error nothing is left
 * running and `*out` is NULL. */
int fleet_test_redis_start(fleet_test_redis_t **out,
                           const char *const *extra_args);

/* As fleet_test_redis_start(), on a port no higher than `max_port` (a
 * cluster node needs port + 10000 for its bus: 55535 at most). */
int fleet_test_redis_start_below(fleet_test_redis_t **out,
                                 const char *const *extra_args, int max_port);

/* As fleet_test_redis_start(), for tests that need a server: skips the test
 * (fleet_test_skip) when none is installed and aborts on any other error. */
fleet_test_redis_t *
fleet_test_redis_start_or_skip(const char *const *extra_args);

/* "redis://127.0.0.1:P", without the password; valid until free. */
const char *fleet_test_redis_url(const fleet_test_redis_t *r);

/* The server's port; it stays the same across restarts. */
int fleet_test_redis_port(const fleet_test_redis_t *r);

/* The server's pid, or 0 while it is not running. */
pid_t fleet_test_redis_pid(const fleet_test_redis_t *r);

/* The server's private directory (its --dir, which holds redis.log and any
 * appendonly file); valid until free. */
const char *fleet_test_redis_dir(const fleet_test_redis_t *r);

/* Stops the server with SIGTERM (so an appendonly file is flushed) and waits
 * up to 5 s for it to exit, then falls back to SIGKILL. Keeps the directory.
 * Returns 0, -ETIMEDOUT if the SIGKILL fallback was needed (the server is gone
 * either way), or 0 at once if the server is not running. */
int fleet_test_redis_stop(fleet_test_redis_t *r);

/* Kills the server with SIGKILL and reaps it, as a crash would. Keeps the
 * directory. Returns 0 (also when the server is not running). */
int fleet_test_redis_kill(fleet_test_redis_t *r);

/* Starts the server again with the same port, directory and arguments, so an
 * appendonly file is reloaded; stops it first if it is running. Waits until
 * it answers PING. Returns 0 or a negative errno (-ECHILD if the port was
 * taken meanwhile). */
int fleet_test_redis_restart(fleet_test_redis_t *r);

/* Suspends the server (SIGSTOP): connections stay open but nothing is
 * answered, as in a long GC pause or a partition. Returns once the server is
 * stopped: 0, or -ESRCH if it is not running. */
int fleet_test_redis_pause(fleet_test_redis_t *r);

/* Resumes a paused server (SIGCONT). Returns 0, or -ESRCH if it is not
 * running. */
int fleet_test_redis_resume(fleet_test_redis_t *r);

/* Runs one command synchronously, in the format of hiredis redisCommand()
 * ("%b" takes a pointer and a length), on a cached connection that is opened
 * on first use and after any error, and authenticated with the
 * --requirepass of extra_args if there was one. Each command times out after
 * 5 s, so a paused server gives NULL rather than a hang. Returns the reply,
 * which the caller frees with freeReplyObject() (an error reply is a reply),
 * or NULL when the server could not be reached. */
redisReply *fleet_test_redis_cmd(fleet_test_redis_t *r, const char *fmt, ...);

/* A loopback port that was free a moment ago, or -errno. */
int fleet_test_free_port(void);

/* Runs `cmd` (a command line without format directives) and aborts the
 * test unless the server answers with something other than an error. */
void fleet_test_redis_ok(fleet_test_redis_t *r, const char *cmd);

/* The commands the server ran since its last CONFIG RESETSTAT, those the
 * scripts ran included, but INFO and CONFIG (from INFO commandstats).
 * Aborts the test when the server cannot be read. */
uint64_t fleet_test_redis_calls(fleet_test_redis_t *r);

/* The calls of `command` (lower case, as INFO commandstats names it) the
 * server ran since its last CONFIG RESETSTAT, 0 when it ran none. Aborts
 * the test when the server cannot be read. */
uint64_t fleet_test_redis_command_calls(fleet_test_redis_t *r,
                                        const char *command);

/* As fleet_test_redis_cmd(), with binary-safe arguments. */
redisReply *fleet_test_redis_cmd_argv(fleet_test_redis_t *r, int argc,
                                      const char **argv, const size_t *argvlen);

/* The commands a least-privilege ACL user of fleet needs on one Redis, as
 * docs/deploy.md lists them after the key and channel patterns (the test
 * acl_docs checks that the page holds this text). */
#define FLEET_TEST_ACL_COMMANDS                                                \
  "+auth +select +ping +script|load +evalsha +eval +function|load +fcall "     \
  "+time +wait "                                                               \
  "+subscribe +unsubscribe +publish +scan +unlink +del +exists +type +get "    \
  "+set +incr +incrby +pexpire +pexpireat +pttl +hget +hset +hdel "            \
  "+hexists +hgetall +hincrby +hlen +hmget +hsetnx +lpush +rpush +lpop "       \
  "+lpos +llen +lrange +lrem +ltrim +mget +sadd +srem +smembers +zadd +zrem "  \
  "+zcard +zcount +zpopmin +zrange +zrangebyscore +zrank +zremrangebyrank "    \
  "+zremrangebyscore +zscore"

/* What a Redis Cluster needs on top of FLEET_TEST_ACL_COMMANDS, as
 * docs/deploy.md lists it. */
#define FLEET_TEST_ACL_COMMANDS_CLUSTER                                        \
  "+cluster|slots +cluster|info +asking +ssubscribe +sunsubscribe +spublish"

/* Creates (or resets) the ACL user `user` with the password "pw" as
 * docs/deploy.md says: the commands FLEET_TEST_ACL_COMMANDS and, for each
 * prefix P of the NULL-terminated `prefixes`, the keys ~{P:* and the
 * channels &{P:*, then the space-separated rules of `extra` (may be NULL;
 * "-hset" takes a command away). Writes "redis://<user>:pw@127.0.0.1:<port>"
 * to `url`. Aborts the test on any error. */
void fleet_test_redis_acl_user(fleet_test_redis_t *r, const char *user,
                               const char *const *prefixes, const char *extra,
                               char *url, size_t size);

/* The prefixes the conformance bodies use ("fleet", the default, and those
 * the test helpers choose), NULL-terminated: the `_acl` variants grant
 * these. */
extern const char *const fleet_test_acl_prefixes[];

/* Server arguments that make replication go through an ACL user of its
 * own, "repl" (password "pw"), so that a test can cut a replica's link
 * with fleet_test_redis_cut_replicas(). Put them in the extra_args of
 * every server of a replicated set (a replica may become the master). */
#define FLEET_TEST_REPL_USER_ARGS                                              \
  "--user", "repl", "on", ">pw", "~*", "&*", "+@all", "--masteruser", "repl",  \
      "--masterauth", "pw"

/* Cuts the links of the replicas of master `r`, deterministically: turns
 * the "repl" user off (ACL SETUSER repl off) and kills its connections
 * (CLIENT KILL USER repl), so the replicas cannot authenticate again and
 * miss every write from now on, while the master keeps serving clients.
 * Aborts the test on failure. */
void fleet_test_redis_cut_replicas(fleet_test_redis_t *r);

/* Kills the server if it is running, removes its directory recursively and
 * frees `r`. NULL is allowed. */
void fleet_test_redis_free(fleet_test_redis_t *r);

#endif /* FLEET_TEST_REDIS_FIXTURE_H */
