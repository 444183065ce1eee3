/* test_cli_util.c -- see test_cli_util.h. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test_cli_util.h"

static const char *cli_tmp(void) {
  return getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
}

static void cli_read_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;

  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
}

void cli_required(void) {
  if (access(FLEET_CLI_PATH, X_OK) != 0)
    fleet_test_skip("the fleet CLI is not built");
}

pid_t cli_spawn(const char *const *args, const char *tag) {
  char out[512], err[512];
  const char *argv[64];
  size_t n = 0;
  pid_t pid;

  argv[n++] = "fleet";
  while (args[n - 1] != NULL && n < 63) {
    argv[n] = args[n - 1];
    n++;
  }
  argv[n] = NULL;
  snprintf(out, sizeof(out), "%s/fleet-cli-%d-%s.out", cli_tmp(), (int)getpid(),
           tag);
  snprintf(err, sizeof(err), "%s/fleet-cli-%d-%s.err", cli_tmp(), (int)getpid(),
           tag);
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);

    if (o < 0 || e < 0 || in < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
        dup2(in, 0) < 0)
      _exit(127);
    unsetenv("FLEET_URL");
    execv(FLEET_CLI_PATH, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

void cli_read_out(const char *tag, char *buf, size_t cap) {
  char path[512];

  snprintf(path, sizeof(path), "%s/fleet-cli-%d-%s.out", cli_tmp(),
           (int)getpid(), tag);
  cli_read_file(path, buf, cap);
}

void cli_reap(pid_t pid, const char *tag, cli_run_t *r) {
  char path[512];
  int st;

  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  snprintf(path, sizeof(path), "%s/fleet-cli-%d-%s.out", cli_tmp(),
           (int)getpid(), tag);
  cli_read_file(path, r->out, sizeof(r->out));
  unlink(path);
  snprintf(path, sizeof(path), "%s/fleet-cli-%d-%s.err", cli_tmp(),
           (int)getpid(), tag);
  cli_read_file(path, r->err, sizeof(r->err));
  unlink(path);
}

void cli_run(cli_run_t *r, const char *const *args) {
  cli_reap(cli_spawn(args, "run"), "run", r);
}

void cli_run_ok(cli_run_t *r, const char *url, const char *prefix,
                const char *const *args) {
  const char *argv[64];
  size_t n = 0, i;

  argv[n++] = "--url";
  argv[n++] = url;
  argv[n++] = "--prefix";
  argv[n++] = prefix;
  for (i = 0; args[i] != NULL && n < 63; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  cli_run(r, argv);
  if (r->status != 0)
    fprintf(stderr, "fleet %s %s: exit %d\nstdout: %s\nstderr: %s\n", args[0],
            args[1] != NULL ? args[1] : "", r->status, r->out, r->err);
  ASSERT_EQ(0, r->status);
}

int cli_lines(const char *s) {
  int n = 0;

  for (; *s != '\0'; s++)
    n += *s == '\n';
  return n;
}

int cli_http(int port, const char *method, const char *path, const char *extra,
             char *resp, size_t cap) {
  struct sockaddr_in a;
  char req[2048];
  size_t got = 0;
  ssize_t n;
  int fd = socket(AF_INET, SOCK_STREAM, 0), code = 0;

  ASSERT_GE(fd, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(connect(fd, (struct sockaddr *)&a, sizeof(a)));
  n = snprintf(req, sizeof(req),
               "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: 0\r\n"
               "\r\n",
               method, path, extra != NULL ? extra : "");
  ASSERT_EQ(n, write(fd, req, (size_t)n));
  while (got + 1 < cap && (n = read(fd, resp + got, cap - 1 - got)) > 0)
    got += (size_t)n;
  resp[got] = '\0';
  close(fd);
  sscanf(resp, "HTTP/1.1 %d", &code);
  return code;
}
