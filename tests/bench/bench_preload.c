/* SPDX-License-Identifier: MIT */
/*
 * bench_preload.c - what libiosig-preload.so costs a program whose opens
 * match no rule (docs/redirect.md, "Performance"); prints JSON.
 *
 *   bench_preload [--runs N] [--opens N] [--files N] [--compare REDIRECT]
 *
 * 1. Opens: this same binary, re-executed as a child, times N open+close
 *    pairs of an existing file, plainly and under iosig-redirect with rules
 *    that do not match it, in four cases: the last byte of the path ends no
 *    rule (the common case: one bitmap test); the last component fits a
 *    rule but the absolute path's literal prefix does not (a comparison per
 *    rule); the path is relative and fits a rule's last component, so it is
 *    made absolute (getcwd) and matched in full (the worst unmatched case);
 *    and the same file opened through fopen.  Child runs of the variants
 *    alternate; the figure is the median over --runs of nanoseconds per
 *    open+close, and the overhead the difference to the plain median.
 * 2. tar: `tar cf` of a tree of --files small files (100 per directory),
 *    plainly and under iosig-redirect with rules that match none of them,
 *    alternating, wall and CPU time of the whole command (iosig-redirect's
 *    start, the catalog, the library's loading included); medians over
 *    --runs, and the slowdown in percent as the median of the ratios within
 *    each round (runs next to each other in time share the machine's
 *    noise).  For reference, `env tar ...`: what any program that execs
 *    another costs here (a second process start).  --compare REDIRECT adds
 *    the first rules under another iosig-redirect (an older build, with its
 *    own preload library) to the same rounds: before and after a change,
 *    side by side.
 *
 * Built without sanitizers and without libiosig: the children run under
 * the real (uninstrumented) preload library, as any program would.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void die(const char *what)
{
	fprintf(stderr, "bench_preload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The child: N open+close (or fopen+fclose) of path; prints ns per pair. */
static int child(const char *how, long n, const char *path)
{
	bool stream = !strcmp(how, "fopen");
	double t0, t1;

	for (int warm = 0; warm < 1000; warm++)
		close(open(path, O_RDONLY));
	t0 = bench_now();
	for (long i = 0; i < n; i++) {
		if (stream) {
			FILE *fp = fopen(path, "r");

			if (!fp)
				die(path);
			fclose(fp);
		} else {
			int fd = open(path, O_RDONLY);

			if (fd < 0)
				die(path);
			close(fd);
		}
	}
	t1 = bench_now();
	printf("%.3f\n", (t1 - t0) * 1e9 / (double)n);
	return 0;
}

/* CPU time (user + system) of the last child run() waited for. */
static double last_cpu;

/* Runs argv (cwd dir) with stdout to a pipe; returns what it printed as a
 * number, or the wall time when `timed` (its CPU time in last_cpu).  Exits
 * on failure. */
static double run(char *const *argv, const char *dir, bool timed)
{
	char buf[128] = "";
	struct rusage ru;
	int pfd[2], st;
	double t0, t1;
	ssize_t n = 0;
	pid_t pid;

	if (pipe(pfd))
		die("pipe");
	t0 = bench_now();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (dir && chdir(dir))
			_exit(126);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (ssize_t k; (k = read(pfd[0], buf + n, sizeof(buf) - 1 - (size_t)n)) > 0;)
		n += k;
	buf[n] = '\0';
	close(pfd[0]);
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_preload: %s failed (status %d)\n", argv[0], st);
		exit(1);
	}
	t1 = bench_now();
	last_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	return timed ? t1 - t0 : strtod(buf, NULL);
}

static void make_tree(const char *root, int files)
{
	char path[PATH_MAX + 32];

	if (mkdir(root, 0755))
		die(root);
	for (int i = 0; i < files; i++) {
		FILE *fp;

		if (i % 100 == 0) {
			snprintf(path, sizeof(path), "%s/d%03d", root, i / 100);
			if (mkdir(path, 0755))
				die(path);
		}
		snprintf(path, sizeof(path), "%s/d%03d/f%05d.txt", root, i / 100, i);
		fp = fopen(path, "w");
		if (!fp)
			die(path);
		fprintf(fp, "small file %d of the tar benchmark of iosig-redirect\n", i);
		for (int k = 0; k < i % 7; k++)
			fprintf(fp, "padding line %d\n", k);
		fclose(fp);
	}
}

int main(int argc, char **argv)
{
	const char *redirect = IOSIG_REDIRECT, *compare = NULL;
	long opens = 200000;
	int runs = 11, files = 10000;
	char self[PATH_MAX], scratch[] = "/var/tmp/iosig-bench-preload.XXXXXX";
	char file[PATH_MAX], tree[PATH_MAX], rules_nomatch[PATH_MAX + 16], archive[PATH_MAX];
	char nstr[32];
	ssize_t sl;

	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child(argv[2], atol(argv[3]), argv[4]);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--opens") && i + 1 < argc)
			opens = atol(argv[++i]);
		else if (!strcmp(argv[i], "--files") && i + 1 < argc)
			files = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--compare") && i + 1 < argc)
			compare = argv[++i];
		else {
			fprintf(stderr, "usage: bench_preload [--runs N] [--opens N] [--files N] [--compare REDIRECT]\n");
			return 2;
		}
	}
	if (runs < 1 || opens < 1 || files < 1 || runs > 1000)
		return 2;
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl < 0)
		die("/proc/self/exe");
	self[sl] = '\0';
	if (!mkdtemp(scratch))
		die(scratch);
	snprintf(file, sizeof(file), "%s/probe.txt", scratch);
	snprintf(tree, sizeof(tree), "%s/tree", scratch);
	snprintf(archive, sizeof(archive), "%s/tree.tar", scratch);
	snprintf(nstr, sizeof(nstr), "%ld", opens);
	close(open(file, O_CREAT | O_WRONLY, 0644));
	snprintf(rules_nomatch, sizeof(rules_nomatch), "%s/other/*.txt", scratch);

	/* Variants of the open benchmark, all the same binary. */
	char *plain[] = { self, "--child", "open", nstr, file, NULL };
	char *bytefilter[] = { (char *)redirect, "-q", "-s", "persist", "/srv/db/*.db", "-s", "tmp",
			       "/**/*-journal", "--", self, "--child", "open", nstr, file, NULL };
	char *prefix[] = { (char *)redirect, "-q", "-s", "tmp", rules_nomatch, "--", self, "--child",
			   "open", nstr, file, NULL };
	char *resolved[] = { (char *)redirect, "-q", "-s", "tmp", rules_nomatch, "--", self, "--child",
			     "open", nstr, "probe.txt", NULL };
	char *plain_f[] = { self, "--child", "fopen", nstr, file, NULL };
	char *stream[] = { (char *)redirect, "-q", "-s", "persist", "/srv/db/*.db", "--", self,
			   "--child", "fopen", nstr, file, NULL };
	char *const *variants[] = { plain, bytefilter, prefix, resolved, plain_f, stream };
	enum { V_PLAIN, V_BYTE, V_PREFIX, V_RESOLVED, V_PLAIN_F, V_STREAM, V_COUNT };
	double *t[V_COUNT], m[V_COUNT];

	for (int v = 0; v < V_COUNT; v++) {
		t[v] = calloc((size_t)runs, sizeof(double));
		if (!t[v])
			die("calloc");
	}
	for (int r = 0; r < runs; r++)
		for (int k = 0; k < V_COUNT; k++) {
			int v = (k + r) % V_COUNT;   /* rotate the order run by run */

			t[v][r] = run(variants[v], scratch, false);
		}
	for (int v = 0; v < V_COUNT; v++)
		m[v] = bench_median(t[v], (unsigned)runs);

	/* tar over many small files. */
	make_tree(tree, files);
	char *tar_plain[] = { "tar", "cf", archive, "tree", NULL };
	char *tar_rules[] = { (char *)redirect, "-s", "persist", "/srv/db/*.db", "-s", "tmp",
			      "/**/*-journal", "-s", "tmp", "/**/*.o", "--", "tar", "cf", archive,
			      "tree", NULL };
	char *tar_dir[] = { (char *)redirect, "-s", "tmp", rules_nomatch, "--", "tar", "cf",
			    archive, "tree", NULL };
	char *tar_env[] = { "env", "tar", "cf", archive, "tree", NULL };
	/* --compare: the first rules under another iosig-redirect (an older
	 * build), in the same rounds. */
	char *tar_cmp[] = { (char *)compare, "-s", "persist", "/srv/db/*.db", "-s", "tmp",
			    "/**/*-journal", "-s", "tmp", "/**/*.o", "--", "tar", "cf", archive,
			    "tree", NULL };
	char *const *tars[] = { tar_plain, tar_rules, tar_dir, tar_env, tar_cmp };
	enum { T_MAX = 5 };
	const int ntar = compare ? T_MAX : T_MAX - 1;
	double *tw[T_MAX], *tc[T_MAX], *rw[T_MAX - 1], *rc[T_MAX - 1];
	double tm[T_MAX], cm[T_MAX], rwm[T_MAX - 1], rcm[T_MAX - 1];

	for (int v = 0; v < ntar; v++) {
		tw[v] = calloc((size_t)runs, sizeof(double));
		tc[v] = calloc((size_t)runs, sizeof(double));
		if (!tw[v] || !tc[v])
			die("calloc");
	}
	for (int v = 0; v < ntar - 1; v++) {
		rw[v] = calloc((size_t)runs, sizeof(double));
		rc[v] = calloc((size_t)runs, sizeof(double));
		if (!rw[v] || !rc[v])
			die("calloc");
	}
	run(tar_plain, scratch, true);   /* warm the page cache */
	for (int r = 0; r < runs; r++) {
		for (int k = 0; k < ntar; k++) {
			int v = (k + r) % ntar;

			unlink(archive);
			tw[v][r] = run(tars[v], scratch, true);
			tc[v][r] = last_cpu;
		}
		/* Ratios within one round: neighbours in time share the noise. */
		for (int v = 0; v < ntar - 1; v++) {
			rw[v][r] = tw[v + 1][r] / tw[0][r];
			rc[v][r] = tc[v + 1][r] / tc[0][r];
		}
	}
	for (int v = 0; v < ntar; v++) {
		tm[v] = bench_median(tw[v], (unsigned)runs);
		cm[v] = bench_median(tc[v], (unsigned)runs);
	}
	for (int v = 0; v < ntar - 1; v++) {
		rwm[v] = bench_median(rw[v], (unsigned)runs);
		rcm[v] = bench_median(rc[v], (unsigned)runs);
	}

	printf("{\n  \"benchmark\": \"preload\",\n  \"runs\": %d,\n", runs);
	printf("  \"open\": {\n    \"opens_per_run\": %ld,\n", opens);
	printf("    \"ns_plain\": %.1f,\n", m[V_PLAIN]);
	printf("    \"ns_unmatched_last_byte\": %.1f,\n", m[V_BYTE]);
	printf("    \"ns_unmatched_prefix\": %.1f,\n", m[V_PREFIX]);
	printf("    \"ns_unmatched_resolved\": %.1f,\n", m[V_RESOLVED]);
	printf("    \"overhead_ns_last_byte\": %.1f,\n", m[V_BYTE] - m[V_PLAIN]);
	printf("    \"overhead_ns_prefix\": %.1f,\n", m[V_PREFIX] - m[V_PLAIN]);
	printf("    \"overhead_ns_resolved\": %.1f,\n", m[V_RESOLVED] - m[V_PLAIN]);
	printf("    \"ns_fopen_plain\": %.1f,\n", m[V_PLAIN_F]);
	printf("    \"ns_fopen_unmatched\": %.1f,\n", m[V_STREAM]);
	printf("    \"overhead_ns_fopen\": %.1f\n  },\n", m[V_STREAM] - m[V_PLAIN_F]);
	printf("  \"tar\": {\n    \"files\": %d,\n", files);
	printf("    \"s_plain\": %.4f,\n", tm[0]);
	printf("    \"s_unmatched_rules\": %.4f,\n", tm[1]);
	printf("    \"s_unmatched_directory_rule\": %.4f,\n", tm[2]);
	printf("    \"cpu_s_plain\": %.4f,\n", cm[0]);
	printf("    \"cpu_s_unmatched_rules\": %.4f,\n", cm[1]);
	printf("    \"cpu_s_unmatched_directory_rule\": %.4f,\n", cm[2]);
	printf("    \"slowdown_pct_unmatched_rules\": %.2f,\n", (rwm[0] - 1) * 100);
	printf("    \"slowdown_pct_unmatched_directory_rule\": %.2f,\n", (rwm[1] - 1) * 100);
	printf("    \"cpu_slowdown_pct_unmatched_rules\": %.2f,\n", (rcm[0] - 1) * 100);
	printf("    \"cpu_slowdown_pct_unmatched_directory_rule\": %.2f,\n", (rcm[1] - 1) * 100);
	printf("    \"s_env\": %.4f,\n", tm[3]);
	printf("    \"cpu_s_env\": %.4f,\n", cm[3]);
	printf("    \"slowdown_pct_env\": %.2f,\n", (rwm[2] - 1) * 100);
	printf("    \"cpu_slowdown_pct_env\": %.2f", (rcm[2] - 1) * 100);
	if (compare) {
		printf(",\n    \"compare\": \"%s\",\n", compare);
		printf("    \"s_compare\": %.4f,\n", tm[4]);
		printf("    \"cpu_s_compare\": %.4f,\n", cm[4]);
		printf("    \"slowdown_pct_compare\": %.2f,\n", (rwm[3] - 1) * 100);
		printf("    \"cpu_slowdown_pct_compare\": %.2f", (rcm[3] - 1) * 100);
	}
	printf("\n  }\n}\n");

	unlink(archive);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd))
			fprintf(stderr, "bench_preload: could not remove %s\n", scratch);
	}
	for (int v = 0; v < V_COUNT; v++)
		free(t[v]);
	for (int v = 0; v < ntar; v++) {
		free(tw[v]);
		free(tc[v]);
	}
	for (int v = 0; v < ntar - 1; v++) {
		free(rw[v]);
		free(rc[v]);
	}
	return 0;
}
