/* SPDX-License-Identifier: MIT */
/*
 * stress.c - threads, fork, vfork and exec under libiosig-preload.so, for
 * test_redirect.py to run under iosig-redirect with a rule for WORK/ *.out:
 *
 *   stress WORK DATA_DIR THREADS ITERATIONS
 *
 * First a child forked while a second thread runs makes the process's
 * first matching open.  Then every thread creates, per iteration, a matched file (open), an unmatched
 * one (open) and a matched stream (fopen); every 8th iteration it forks a
 * child that creates a matched file and exits, vforks a child that only
 * execs /bin/sh to create a matched file by redirection (the exec'd shell
 * inherits the preload library and the rules), and waits for both.  Then
 * every matched file must be a link into DATA_DIR with its own text and
 * every unmatched one a regular file.  A deadlock (a lock inherited held
 * across fork) shows as the test's timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *work, *data;
static int iterations;

static int make(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Checks path: a link into DATA_DIR (linked) or a regular file, holding
 * its own name's text. */
static int check(const char *path, const char *text, int linked)
{
	char buf[256], target[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if (lstat(path, &st)) {
		printf("FAIL %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (linked) {
		/* Inside this process the link is the file it stands for
		 * (readlink says EINVAL): ask the kernel, as a process without
		 * the preload library would. */
		n = syscall(SYS_readlinkat, AT_FDCWD, path, target, sizeof(target) - 1);
		if (n < 0 || (target[n] = '\0', strncmp(target, data, strlen(data)))) {
			printf("FAIL %s: not a link into %s\n", path, data);
			return -1;
		}
	} else if (!S_ISREG(st.st_mode)) {
		printf("FAIL %s: not a regular file\n", path);
		return -1;
	}
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n < 0 || (buf[n] = '\0', strcmp(buf, text))) {
		printf("FAIL %s: does not hold '%s'\n", path, text);
		return -1;
	}
	return 0;
}

/* vfork + exec of `sh -c cmd`, in a function of its own so that no
 * variable of the caller lives across vfork.  0 when the shell succeeded. */
static __attribute__((noinline)) int vfork_sh(const char *cmd)
{
	char *const av[] = { "sh", "-c", (char *)cmd, NULL };
	int st = 0;
	pid_t v = vfork();

	if (v == 0) {
		execve("/bin/sh", av, environ);
		_exit(127);
	}
	if (v < 0 || waitpid(v, &st, 0) != v || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	char path[PATH_MAX], text[64];
	long bad = 0;

	for (int i = 0; i < iterations; i++) {
		FILE *fp;

		snprintf(path, sizeof(path), "%s/t%ld-%d.out", work, k, i);
		snprintf(text, sizeof(text), "t%ld-%d", k, i);
		bad += make(path, text) != 0;
		snprintf(path, sizeof(path), "%s/t%ld-%d.txt", work, k, i);
		bad += make(path, text) != 0;
		snprintf(path, sizeof(path), "%s/s%ld-%d.out", work, k, i);
		fp = fopen(path, "w");
		bad += !fp || fputs(text, fp) < 0 || fclose(fp) != 0;
		if (i % 8)
			continue;

		snprintf(path, sizeof(path), "%s/f%ld-%d.out", work, k, i);
		pid_t pid = fork();

		if (pid == 0)
			_exit(make(path, path) ? 1 : 0);
		{
			char cmd[PATH_MAX + 64];

			snprintf(cmd, sizeof(cmd), "printf v%ld-%d > '%s/v%ld-%d.out'", k, i, work, k, i);
			bad += vfork_sh(cmd) != 0;
		}
		{
			int st = 0;

			bad += pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			       WEXITSTATUS(st);
		}
	}
	return (void *)bad;
}

static void *idle(void *arg)
{
	char c;

	(void)!read(*(int *)arg, &c, 1);
	return NULL;
}

/*
 * The first matching open of the process happens in a child forked while
 * another thread runs: the library must not need the dynamic loader in
 * the child (it loads its core before the fork).  0 if the child created
 * WORK/first.out as a link into DATA_DIR.
 */
static int fork_first(void)
{
	char path[PATH_MAX];
	pthread_t t;
	int pfd[2], st = 0, r;
	pid_t pid;

	if (pipe(pfd) || pthread_create(&t, NULL, idle, &pfd[0]))
		return -1;
	snprintf(path, sizeof(path), "%s/first.out", work);
	pid = fork();
	if (pid == 0)
		_exit(make(path, "first") ? 1 : 0);
	r = pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) ? -1 : 0;
	(void)!write(pfd[1], "x", 1);
	pthread_join(t, NULL);
	close(pfd[0]);
	close(pfd[1]);
	return r ? r : check(path, "first", 1);
}

int main(int argc, char **argv)
{
	int threads, failures = 0;
	char path[PATH_MAX], text[64];
	pthread_t *tids;

	if (argc != 5) {
		fprintf(stderr, "usage: stress WORK DATA_DIR THREADS ITERATIONS\n");
		return 2;
	}
	work = argv[1];
	data = argv[2];
	threads = atoi(argv[3]);
	iterations = atoi(argv[4]);
	if (fork_first()) {
		printf("FAIL the first matching open, in a child forked with threads running\n");
		failures++;
	}
	tids = calloc((size_t)threads, sizeof(*tids));
	if (!tids)
		return 2;
	for (long k = 0; k < threads; k++)
		if (pthread_create(&tids[k], NULL, worker, (void *)k))
			return 2;
	for (int k = 0; k < threads; k++) {
		void *bad = NULL;

		pthread_join(tids[k], &bad);
		if (bad) {
			printf("FAIL thread %d: %ld calls failed\n", k, (long)bad);
			failures++;
		}
	}
	for (int k = 0; k < threads; k++) {
		for (int i = 0; i < iterations; i++) {
			snprintf(text, sizeof(text), "t%d-%d", k, i);
			snprintf(path, sizeof(path), "%s/t%d-%d.out", work, k, i);
			failures += check(path, text, 1) != 0;
			snprintf(path, sizeof(path), "%s/t%d-%d.txt", work, k, i);
			failures += check(path, text, 0) != 0;
			snprintf(path, sizeof(path), "%s/s%d-%d.out", work, k, i);
			failures += check(path, text, 1) != 0;
			if (i % 8)
				continue;
			snprintf(path, sizeof(path), "%s/f%d-%d.out", work, k, i);
			failures += check(path, path, 1) != 0;
			snprintf(text, sizeof(text), "v%d-%d", k, i);
			snprintf(path, sizeof(path), "%s/v%d-%d.out", work, k, i);
			failures += check(path, text, 1) != 0;
		}
	}
	printf("%s: %d threads x %d iterations, %d failures\n", failures ? "FAIL" : "ok", threads,
	       iterations, failures);
	free(tids);
	return failures ? 1 : 0;
}
