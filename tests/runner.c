/* runner.c -- main of fleet-tests: runs each selected test in a child process
 * of its own, with a timeout, and reports the results in TAP form. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "test-list.h"

#define RUNNER_MAX_JOBS 256
/* The most bytes of a failed test's output that are shown (the end). */
#define RUNNER_OUTPUT_MAX (64 * 1024)
/* The longest the runner sleeps between two timeout checks, in ms. */
#define RUNNER_TICK_MS 1000

#define RUNNER_NTESTS (sizeof(fleet_test_list) / sizeof(fleet_test_list[0]))

/* One test in flight. */
typedef struct {
  const fleet_test_entry_t *test;
  pid_t pid; /* also its process group; 0 when the job slot is free */
  uint64_t start_ns;
  uint64_t deadline_ns;
  unsigned timeout;
  int timed_out;
  char dir[PATH_MAX]; /* the test's private TMPDIR; holds its output */
} runner_job_t;

typedef struct {
  char self[PATH_MAX]; /* this binary, exec'd for each test */
  unsigned timeout;    /* --timeout, in seconds; 0 keeps each test's own */
  double slack;        /* FLEET_TEST_SLACK, or the default for njobs */
  int njobs;
  sigset_t waited;   /* SIGCHLD and the signals that interrupt the run */
  sigset_t old_mask; /* the mask to restore in children */
  runner_job_t *jobs;
  unsigned reported; /* results printed so far */
  unsigned passed;
  unsigned failed;
  unsigned skipped;
} runner_t;

static uint64_t runner_now_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void runner_usage(FILE *f) {
  fprintf(f,
          "usage: fleet-tests [--list] [-j N] [--timeout SEC] [substring...]\n"
          "\n"
          "Runs every test whose name contains one of the substrings (all\n"
          "tests when none is given), each in its own process, N at a time\n"
          "(default 1). --timeout replaces the timeout of every test (by\n"
          "default %d s unless the test sets its own). --list prints the\n"
          "names instead. Environment: FLEET_REDIS_SERVER (redis-server\n"
          "binary), FLEET_TEST_REQUIRE_REDIS=1 (fail instead of skipping\n"
          "without redis-server), FLEET_TEST_KEEP_TMP=1 (keep each test's\n"
          "temporary directory), FLEET_TEST_SLACK=X (scale every timing\n"
          "window and each test's own timeout by X; by default 1, or N\n"
          "divided by the number of cores when N is larger).\n",
          FLEET_TEST_DEFAULT_TIMEOUT);
}

/* Parses a decimal integer in [min, max]; returns -1 when `s` is not one. */
static long runner_parse_int(const char *s, long min, long max) {
  char *end;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
    return -1;
  return v;
}

/* Settles the slack of the run: FLEET_TEST_SLACK when set, else 1, or the
 * jobs per core when there are more jobs than cores, since each test then
 * gets a fraction of a core. Exports the value so that every test reads the
 * same one. Returns -1 on an invalid value. */
static int runner_set_slack(runner_t *rn) {
  const char *env;
  char buf[32];
  long cores;

  env = getenv(FLEET_TEST_SLACK_ENV);
  if (env != NULL && env[0] != '\0') {
    rn->slack = fleet_test_parse_slack(env);
    if (rn->slack == 0) {
      fprintf(stderr, "fleet-tests: %s takes a number in (0, 1000]\n",
              FLEET_TEST_SLACK_ENV);
      return -1;
    }
  } else {
    cores = sysconf(_SC_NPROCESSORS_ONLN);
    rn->slack = 1;
    if (cores > 0 && rn->njobs > cores)
      rn->slack = (double)rn->njobs / (double)cores;
  }
  snprintf(buf, sizeof(buf), "%g", rn->slack);
  setenv(FLEET_TEST_SLACK_ENV, buf, 1);
  return 0;
}

static const fleet_test_entry_t *runner_find(const char *name) {
  size_t i;

  for (i = 0; i < RUNNER_NTESTS; i++) {
    if (strcmp(fleet_test_list[i].name, name) == 0)
      return &fleet_test_list[i];
  }
  return NULL;
}

/* The child side of `--run NAME`: runs the test in this process. */
static int runner_run_one(const char *name) {
  const fleet_test_entry_t *t;

  t = runner_find(name);
  if (t == NULL) {
    fprintf(stderr, "fleet-tests: no test named %s\n", name);
    return 2;
  }
  /* Unbuffered, so that nothing printed is lost when an assertion aborts. */
  setvbuf(stdout, NULL, _IONBF, 0);
  return t->main();
}

/* ------------------------------------------------------------------------ */
/* Starting and reaping children                                            */

/* Never returns: becomes `fleet-tests --run NAME` with stdout and stderr on
 * `out_fd`, in a new process group, with TMPDIR set to the job's dir. */
static _Noreturn void runner_exec_child(const runner_t *rn,
                                        const runner_job_t *job, int out_fd,
                                        pid_t parent) {
  int fd;

  setpgid(0, 0);
  /* A test must not outlive a runner that was killed. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(127);
  fd = open("/dev/null", O_RDONLY);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    if (fd != STDIN_FILENO)
      close(fd);
  }
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  signal(SIGCHLD, SIG_DFL);
  sigprocmask(SIG_SETMASK, &rn->old_mask, NULL);
  setenv("TMPDIR", job->dir, 1);
  execl(rn->self, rn->self, "--run", job->test->name, (char *)NULL);
  fprintf(stderr, "exec %s: %s\n", rn->self, strerror(errno));
  _exit(127);
}

/* Starts `t` in `job`. Returns 0 or -errno (and then the job stays free). */
static int runner_start(runner_t *rn, runner_job_t *job,
                        const fleet_test_entry_t *t) {
  char out[PATH_MAX + 16];
  const char *tmp;
  pid_t parent;
  pid_t pid;
  int fd;
  int err;

  tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0')
    tmp = "/tmp";
  snprintf(job->dir, sizeof(job->dir), "%s/fleet-test-XXXXXX", tmp);
  if (mkdtemp(job->dir) == NULL)
    return -errno;
  snprintf(out, sizeof(out), "%s/output", job->dir);
  fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    err = -errno;
    fleet_test_rmtree(job->dir);
    return err;
  }
  job->test = t;
  job->timeout =
      rn->timeout != 0 ? rn->timeout : (unsigned)(t->timeout * rn->slack + 0.5);
  job->timed_out = 0;
  job->start_ns = runner_now_ns();
  job->deadline_ns = job->start_ns + (uint64_t)job->timeout * 1000000000u;
  fflush(stdout);
  fflush(stderr);
  parent = getpid();
  pid = fork();
  if (pid < 0) {
    err = -errno;
    close(fd);
    fleet_test_rmtree(job->dir);
    return err;
  }
  if (pid == 0)
    runner_exec_child(rn, job, fd, parent);
  close(fd);
  /* Also done by the child; doing it here too means the group exists before
   * the runner may need to kill it. */
  setpgid(pid, pid);
  job->pid = pid;
  return 0;
}

/* Reads at most RUNNER_OUTPUT_MAX bytes from the end of the job's output
 * into a NUL-terminated buffer; `*omitted` gets the bytes skipped. Returns
 * NULL when the output cannot be read. */
static char *runner_read_output(const runner_job_t *job, size_t *omitted) {
  char path[PATH_MAX + 16];
  struct stat st;
  char *buf;
  size_t want;
  ssize_t n;
  size_t len;
  int fd;

  *omitted = 0;
  snprintf(path, sizeof(path), "%s/output", job->dir);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return NULL;
  }
  want = (size_t)st.st_size;
  if (want > RUNNER_OUTPUT_MAX) {
    *omitted = want - RUNNER_OUTPUT_MAX;
    want = RUNNER_OUTPUT_MAX;
    lseek(fd, (off_t)*omitted, SEEK_SET);
  }
  buf = malloc(want + 1);
  if (buf == NULL) {
    close(fd);
    return NULL;
  }
  len = 0;
  while (len < want) {
    n = read(fd, buf + len, want - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  close(fd);
  buf[len] = '\0';
  return buf;
}

/* Prints the output of a failed test, each line indented. */
static void runner_print_output(const runner_job_t *job) {
  size_t omitted;
  char *buf;
  char *line;
  char *nl;

  buf = runner_read_output(job, &omitted);
  if (buf == NULL) {
    printf("    (output unavailable)\n");
    return;
  }
  line = buf;
  if (omitted > 0) {
    /* Start at a line boundary. */
    nl = strchr(buf, '\n');
    if (nl != NULL) {
      omitted += (size_t)(nl + 1 - buf);
      line = nl + 1;
    }
    printf("    [... %zu bytes omitted ...]\n", omitted);
  }
  for (; *line != '\0'; line = nl + 1) {
    nl = strchr(line, '\n');
    if (nl == NULL) {
      printf("    %s\n", line);
      break;
    }
    printf("    %.*s\n", (int)(nl - line), line);
  }
  free(buf);
}

/* Prints the skip reason of a test: the rest of its last line that starts
 * with FLEET_TEST_SKIP_MARKER. */
static void runner_print_skip_reason(const runner_job_t *job) {
  const size_t mlen = strlen(FLEET_TEST_SKIP_MARKER);
  const char *reason;
  size_t omitted;
  char *buf;
  char *p;

  reason = NULL;
  buf = runner_read_output(job, &omitted);
  for (p = buf; p != NULL && *p != '\0'; p++) {
    if ((p == buf || p[-1] == '\n') &&
        strncmp(p, FLEET_TEST_SKIP_MARKER, mlen) == 0)
      reason = p + mlen;
  }
  if (reason != NULL)
    printf("%.*s\n", (int)strcspn(reason, "\n"), reason);
  else
    printf("no reason given\n");
  free(buf);
}

/* Reports the job whose child exited with `status`, then frees the job. */
static void runner_finish(runner_t *rn, runner_job_t *job, int status) {
  double secs;
  int code;

  secs = (double)(runner_now_ns() - job->start_ns) / 1e9;
  rn->reported++;
  if (job->timed_out) {
    rn->failed++;
    printf("not ok %u - %s (timeout after %u s)\n", rn->reported,
           job->test->name, job->timeout);
    runner_print_output(job);
  } else if (WIFEXITED(status)) {
    code = WEXITSTATUS(status);
    if (code == 0) {
      rn->passed++;
      printf("ok %u - %s (%.2f s)\n", rn->reported, job->test->name, secs);
    } else if (code == FLEET_TEST_SKIP) {
      rn->skipped++;
      printf("ok %u - %s # SKIP ", rn->reported, job->test->name);
      runner_print_skip_reason(job);
    } else {
      rn->failed++;
      printf("not ok %u - %s (exit %d)\n", rn->reported, job->test->name, code);
      runner_print_output(job);
    }
  } else {
    rn->failed++;
    printf("not ok %u - %s (signal %d)\n", rn->reported, job->test->name,
           WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    runner_print_output(job);
  }
  fflush(stdout);
  if (getenv("FLEET_TEST_KEEP_TMP") != NULL)
    printf("# kept %s\n", job->dir);
  else
    fleet_test_rmtree(job->dir);
  job->pid = 0;
}

/* Reaps every child that has exited. Each one's process group is killed
 * before the child is reaped, so that helpers it left behind die with it and
 * the group id cannot have been reused yet. */
static void runner_reap(runner_t *rn) {
  siginfo_t info;
  int status;
  int i;

  for (;;) {
    memset(&info, 0, sizeof(info));
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (info.si_pid == 0)
      break;
    killpg(info.si_pid, SIGKILL);
    while (waitpid(info.si_pid, &status, 0) == -1 && errno == EINTR)
      ;
    for (i = 0; i < rn->njobs; i++) {
      if (rn->jobs[i].pid == info.si_pid) {
        runner_finish(rn, &rn->jobs[i], status);
        break;
      }
    }
  }
}

/* Kills the process group of every job past its deadline; the kill is
 * reported when the child is reaped. Returns the ns until the next deadline,
 * at most RUNNER_TICK_MS. */
static uint64_t runner_check_timeouts(runner_t *rn) {
  uint64_t wait_ns;
  uint64_t now;
  int i;

  wait_ns = (uint64_t)RUNNER_TICK_MS * 1000000u;
  now = runner_now_ns();
  for (i = 0; i < rn->njobs; i++) {
    runner_job_t *job = &rn->jobs[i];
    if (job->pid == 0 || job->timed_out)
      continue;
    if (now >= job->deadline_ns) {
      killpg(job->pid, SIGKILL);
      job->timed_out = 1;
    } else if (job->deadline_ns - now < wait_ns) {
      wait_ns = job->deadline_ns - now;
    }
  }
  return wait_ns;
}

/* Kills every running test, reaps it and removes its directory, after the
 * runner itself was told to stop. */
static void runner_abort_all(runner_t *rn) {
  int status;
  int i;

  for (i = 0; i < rn->njobs; i++) {
    if (rn->jobs[i].pid == 0)
      continue;
    killpg(rn->jobs[i].pid, SIGKILL);
    while (waitpid(rn->jobs[i].pid, &status, 0) == -1 && errno == EINTR)
      ;
    fleet_test_rmtree(rn->jobs[i].dir);
    rn->jobs[i].pid = 0;
  }
}

/* Runs the `n` tests of `selected`, rn->njobs at a time. Returns 0, or the
 * signal that interrupted the run. */
static int runner_run_all(runner_t *rn, const fleet_test_entry_t **selected,
                          size_t n) {
  struct timespec ts;
  uint64_t wait_ns;
  size_t next;
  int running;
  int sig;
  int rc;
  int i;

  next = 0;
  running = 0;
  while (next < n || running > 0) {
    for (i = 0; i < rn->njobs && next < n; i++) {
      if (rn->jobs[i].pid != 0)
        continue;
      rc = runner_start(rn, &rn->jobs[i], selected[next]);
      if (rc != 0) {
        rn->reported++;
        rn->failed++;
        printf("not ok %u - %s (could not start: %s)\n", rn->reported,
               selected[next]->name, strerror(-rc));
        fflush(stdout);
      }
      next++;
    }
    running = 0;
    for (i = 0; i < rn->njobs; i++)
      running += rn->jobs[i].pid != 0;
    if (running == 0)
      continue;
    wait_ns = runner_check_timeouts(rn);
    ts.tv_sec = (time_t)(wait_ns / 1000000000u);
    ts.tv_nsec = (long)(wait_ns % 1000000000u);
    sig = sigtimedwait(&rn->waited, NULL, &ts);
    if (sig > 0 && sig != SIGCHLD) {
      runner_abort_all(rn);
      return sig;
    }
    runner_reap(rn);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

/* Fails when two tests share a name, which would make --run ambiguous. */
static int runner_check_names(void) {
  size_t i;
  size_t j;

  for (i = 0; i < RUNNER_NTESTS; i++) {
    for (j = i + 1; j < RUNNER_NTESTS; j++) {
      if (strcmp(fleet_test_list[i].name, fleet_test_list[j].name) == 0) {
        fprintf(stderr, "fleet-tests: %s is listed twice\n",
                fleet_test_list[i].name);
        return -1;
      }
    }
  }
  return 0;
}

static void runner_nop_handler(int sig) {}

int main(int argc, char **argv) {
  const fleet_test_entry_t *selected[RUNNER_NTESTS];
  struct sigaction sa;
  runner_t rn;
  ssize_t len;
  size_t n;
  size_t i;
  int list;
  int nfilters;
  long v;
  int sig;
  int a;
  int j;

  /* The tools read their URL from these when --url is absent: every test
   * and every program it runs starts without them. */
  unsetenv("FLEET_URL");
  unsetenv("REDIS_URL");
  if (argc == 3 && strcmp(argv[1], "--run") == 0)
    return runner_run_one(argv[2]);
  if (runner_check_names() != 0)
    return 2;

  memset(&rn, 0, sizeof(rn));
  rn.njobs = 1;
  list = 0;
  nfilters = 0;
  for (a = 1; a < argc; a++) {
    const char *arg = argv[a];
    const char *val = NULL;
    if (strcmp(arg, "--list") == 0) {
      list = 1;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      runner_usage(stdout);
      return 0;
    } else if (strncmp(arg, "-j", 2) == 0) {
      val = arg[2] != '\0' ? arg + 2 : (a + 1 < argc ? argv[++a] : "");
      v = runner_parse_int(val, 1, RUNNER_MAX_JOBS);
      if (v < 0) {
        fprintf(stderr, "fleet-tests: -j takes 1..%d\n", RUNNER_MAX_JOBS);
        return 2;
      }
      rn.njobs = (int)v;
    } else if (strncmp(arg, "--timeout", 9) == 0 &&
               (arg[9] == '\0' || arg[9] == '=')) {
      val = arg[9] == '=' ? arg + 10 : (a + 1 < argc ? argv[++a] : "");
      v = runner_parse_int(val, 1, 86400);
      if (v < 0) {
        fprintf(stderr, "fleet-tests: --timeout takes 1..86400 seconds\n");
        return 2;
      }
      rn.timeout = (unsigned)v;
    } else if (arg[0] == '-') {
      runner_usage(stderr);
      return 2;
    } else {
      /* Compact the filters to the front of argv. */
      argv[1 + nfilters++] = argv[a];
    }
  }

  n = 0;
  for (i = 0; i < RUNNER_NTESTS; i++) {
    int match = nfilters == 0;
    for (j = 0; j < nfilters && !match; j++)
      match = strstr(fleet_test_list[i].name, argv[1 + j]) != NULL;
    if (match)
      selected[n++] = &fleet_test_list[i];
  }
  if (list) {
    for (i = 0; i < n; i++)
      printf("%s\n", selected[i]->name);
    return n > 0 ? 0 : 1;
  }

  if (runner_set_slack(&rn) != 0)
    return 2;
  len = readlink("/proc/self/exe", rn.self, sizeof(rn.self) - 1);
  if (len > 0)
    rn.self[len] = '\0';
  else
    snprintf(rn.self, sizeof(rn.self), "%s", argv[0]);
  rn.jobs = calloc((size_t)rn.njobs, sizeof(*rn.jobs));
  if (rn.jobs == NULL) {
    fprintf(stderr, "fleet-tests: out of memory\n");
    return 2;
  }

  /* The runner waits for these with sigtimedwait(); SIGCHLD needs a handler
   * so that it is never discarded. */
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = runner_nop_handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sigemptyset(&rn.waited);
  sigaddset(&rn.waited, SIGCHLD);
  sigaddset(&rn.waited, SIGINT);
  sigaddset(&rn.waited, SIGTERM);
  sigaddset(&rn.waited, SIGHUP);
  /* A closed stdout (fleet-tests | head) ends the run cleanly too. */
  sigaddset(&rn.waited, SIGPIPE);
  sigprocmask(SIG_BLOCK, &rn.waited, &rn.old_mask);

  if (n == 0)
    fprintf(stderr, "fleet-tests: no test matches\n");
  else
    printf("1..%zu\n# slack %g\n", n, rn.slack);
  fflush(stdout);
  sig = runner_run_all(&rn, selected, n);
  if (sig != 0)
    printf("# interrupted by signal %d\n", sig);
  printf("%u passed, %u failed, %u skipped\n", rn.passed, rn.failed,
         rn.skipped);
  fflush(stdout);
  free(rn.jobs);
  if (sig != 0)
    return 128 + sig;
  return rn.failed == 0 && rn.passed + rn.skipped > 0 ? 0 : 1;
}
