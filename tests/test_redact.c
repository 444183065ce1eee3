/* test_redact.c -- fleet_redact_url(): passwords in the user info and in
 * query options become "***", everything else is kept, and the output
 * follows snprintf()'s rules for size and truncation. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

/* Redacts `url` and checks the result and the returned length. */
static void redact_check(const char *url, const char *want) {
  char out[512];
  size_t n = fleet_redact_url(url, out, sizeof(out));

  ASSERT_STR_EQ(out, want);
  ASSERT_UEQ(n, strlen(want));
}

TEST_IMPL(redact_userinfo) {
  redact_check("redis://user:s3cret@host:6379/2",
               "redis://user:***@host:6379/2");
  redact_check("redis://:s3cret@127.0.0.1", "redis://:***@127.0.0.1");
  redact_check("rediss://u:p@h:6380", "rediss://u:***@h:6380");
  /* A password with '@', ':' and '/' is hidden whole: the user info runs
   * to the last '@'. */
  redact_check("redis://u:a@b:c/d@host/0", "redis://u:***@host/0");
  /* Unescaped '?' in a password (a URL fleet refuses, printed in the
   * error) is hidden too. */
  redact_check("redis://u:pa?ss@host", "redis://u:***@host");
  /* User info without ':' may be a password: hidden whole. */
  redact_check("redis://s3cret@host", "redis://***@host");
  /* Several hosts after the user info are kept. */
  redact_check("redis+sentinel://u:pw@h1:26379,h2:26380/mymaster/1",
               "redis+sentinel://u:***@h1:26379,h2:26380/mymaster/1");
  /* Nothing secret: unchanged. */
  redact_check("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0");
  redact_check("redis://[::1]:6379", "redis://[::1]:6379");
  redact_check("memory://", "memory://");
  redact_check("", "");
  /* No scheme. */
  redact_check("u:pw@host", "u:***@host");
  return 0;
}

TEST_IMPL(redact_query) {
  redact_check("unix:///run/redis.sock?db=2&password=s3cret",
               "unix:///run/redis.sock?db=2&password=***");
  redact_check("unix:///run/redis.sock?password=s3cret&db=2",
               "unix:///run/redis.sock?password=***&db=2");
  redact_check("redis+sentinel://h:26379/m?sentinel_password=x&sentinel_user=u",
               "redis+sentinel://h:26379/m?sentinel_password=***&"
               "sentinel_user=u");
  /* Both places at once. */
  redact_check("rediss+sentinel://u:p1@h/m?tls_verify=0&sentinel_password=p2",
               "rediss+sentinel://u:***@h/m?tls_verify=0&"
               "sentinel_password=***");
  /* Names without case and %-decoded; an empty value. */
  redact_check("unix:///s?PassWord=a&pass%77ord=b&x_PASSWORD=c&password=",
               "unix:///s?PassWord=***&pass%77ord=***&x_PASSWORD=***&"
               "password=***");
  /* Options that only look alike are kept. */
  redact_check("unix:///s?passwords=a&mypassword=b&password_file=c&pw",
               "unix:///s?passwords=a&mypassword=b&password_file=c&pw");
  /* A secret value runs to the next '&' or the end, whatever it holds:
   * a '#' (fleet refuses a fragment) is a byte of the password. */
  redact_check("unix:///s?password=a#frag", "unix:///s?password=***");
  redact_check("redis+sentinel://h/m?sentinel_password=ab#cd",
               "redis+sentinel://h/m?sentinel_password=***");
  redact_check("redis+sentinel://h/m?sentinel_password=ab#cd&db=1",
               "redis+sentinel://h/m?sentinel_password=***&db=1");
  redact_check("unix:///s?db=1#x&password=ab#cd?e/f",
               "unix:///s?db=1#x&password=***");
  redact_check("rediss+cluster://h?tls_verify=0&password=a#b#c",
               "rediss+cluster://h?tls_verify=0&password=***");
  /* A '?' inside the user info does not start the query. */
  redact_check("redis://u:p?password=x@h?password=y",
               "redis://u:***@h?password=***");
  return 0;
}

TEST_IMPL(redact_truncate) {
  const char *url = "redis://user:s3cret@host:6379";
  const char *want = "redis://user:***@host:6379";
  char out[64];
  size_t i;

  /* Every size: the returned length is the whole length, `out` holds its
   * first out_size - 1 bytes, and no secret byte appears. */
  for (i = 1; i <= strlen(want) + 1; i++) {
    memset(out, 'Z', sizeof(out));
    ASSERT_UEQ(fleet_redact_url(url, out, i), strlen(want));
    ASSERT_UEQ(strlen(out), i - 1);
    ASSERT_MEM_EQ(out, want, i - 1);
    ASSERT_EQ(out[i], 'Z');
    ASSERT_NULL(strstr(out, "s3"));
  }
  /* Size 0 writes nothing; NULL out with size 0 is allowed. */
  memset(out, 'Z', sizeof(out));
  ASSERT_UEQ(fleet_redact_url(url, out, 0), strlen(want));
  ASSERT_EQ(out[0], 'Z');
  ASSERT_UEQ(fleet_redact_url(url, NULL, 0), strlen(want));
  /* NULL url gives "". */
  ASSERT_UEQ(fleet_redact_url(NULL, out, sizeof(out)), 0);
  ASSERT_STR_EQ(out, "");
  return 0;
}

/* fleet-demo prints a URL it refuses with the password hidden. */
TEST_IMPL(redact_demo_bad_url) {
#ifdef FLEET_DEMO_PATH
  char *argv[] = {"fleet-demo", "--url",   "redis://u:s3cret@host:notaport",
                  "stats",      "--queue", "q",
                  NULL};
  char err[4096];
  int fds[2], st;
  ssize_t n, len = 0;
  pid_t pid;

  ASSERT_EQ(0, pipe(fds));
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (dup2(fds[1], 2) < 0 || dup2(fds[1], 1) < 0)
      _exit(127);
    close(fds[0]);
    execv(FLEET_DEMO_PATH, argv);
    _exit(127);
  }
  close(fds[1]);
  while ((n = read(fds[0], err + len, sizeof(err) - 1 - (size_t)len)) > 0)
    len += n;
  err[len] = '\0';
  close(fds[0]);
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 127);
  ASSERT_NOT_NULL(strstr(err, "redis://u:***@host:notaport"));
  ASSERT_NULL(strstr(err, "s3cret"));
  return 0;
#else
  fleet_test_skip("examples are not built");
#endif
}
