/* SPDX-License-Identifier: MIT */
/*
 * bench_plugin_open.c - the annotated open as each compiler plugin compiles
 * it, side by side in one run.  bench_open measures libiosig's entry point
 * called by hand; here the same small program - a loop of plain creates and
 * a loop of creates under "#pragma io sig" with a run-time value - is
 * compiled by every compiler given (GCC with iosig.so, clang with
 * iosig-clang.so), linked with libiosig and run, so that what the plugins
 * generate around the call (the site, the value, the call) is measured.
 * Prints one JSON object: per compiler the median per-call time of a plain
 * create and an annotated one and their difference (target: <= 20 us).
 *
 * The programs run with IOSIG_DRYRUN=1 in a scratch directory (on /dev/shm
 * when there is one, else $TMPDIR or /tmp): every annotated create makes
 * the decision (parsed signature, value, selection over this machine's
 * catalog) but leaves the file where the program asked, so the figure is
 * the plugins' call path and the decision, without the filesystem work of a
 * redirect (bench_open measures that).  Each program runs ROUNDS times, the
 * compilers' programs taking turns; the figures are the medians.
 *
 * usage: bench_plugin_open [--compiler gcc|clang --cc DRIVER --plugin PATH]...
 *                          [--libdir DIR] [--include DIR]
 * Without --compiler: every plugin of the build tree next to this program
 * (gcc, clang-14, clang-16 when built).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "json.h"

extern char **environ;

#define MAX_COMPILERS 8
#define ROUNDS 5

struct compiler {
	const char *kind;          /* "gcc" or "clang" */
	char cc[PATH_MAX];         /* the driver */
	char plugin[PATH_MAX];
};

/* The measured program: prints "plain_us annotated_us" (medians over
 * batches of the per-call mean of a batch; files removed between batches,
 * outside the timed region). */
static const char program[] =
	"#include <fcntl.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <time.h>\n"
	"#include <unistd.h>\n"
	"#define BATCHES 31\n"
	"#define CALLS 200\n"
	"static double now(void)\n"
	"{\n"
	"\tstruct timespec ts;\n"
	"\tclock_gettime(CLOCK_MONOTONIC, &ts);\n"
	"\treturn ts.tv_sec + ts.tv_nsec * 1e-9;\n"
	"}\n"
	"static int cmp(const void *a, const void *b)\n"
	"{\n"
	"\tdouble x = *(const double *)a, y = *(const double *)b;\n"
	"\treturn (x > y) - (x < y);\n"
	"}\n"
	"static void clean(char (*names)[32])\n"
	"{\n"
	"\tfor (int i = 0; i < CALLS; i++)\n"
	"\t\tunlink(names[i]);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tstatic char names[CALLS][32];\n"
	"\tdouble plain[BATCHES], annotated[BATCHES];\n"
	"\tlong chunk = 4096L * argc;\n"
	"\tint fd;\n"
	"\t(void)argv;\n"
	"\tfor (int i = 0; i < CALLS; i++)\n"
	"\t\tsnprintf(names[i], sizeof(names[i]), \"f%d\", i);\n"
	"\t/* The first annotated call builds the catalog: not timed. */\n"
	"#pragma io sig tmp random_access size_per_io(chunk)\n"
	"\tfd = open(\"warm\", O_CREAT | O_WRONLY | O_TRUNC, 0600);\n"
	"\tif (fd < 0 || close(fd) || unlink(\"warm\"))\n"
	"\t\treturn 1;\n"
	"\tfor (int b = 0; b < BATCHES; b++) {\n"
	"\t\tdouble t0 = now();\n"
	"\t\tfor (int i = 0; i < CALLS; i++) {\n"
	"\t\t\tfd = open(names[i], O_CREAT | O_WRONLY | O_TRUNC, 0600);\n"
	"\t\t\tif (fd < 0 || close(fd))\n"
	"\t\t\t\treturn 1;\n"
	"\t\t}\n"
	"\t\tplain[b] = (now() - t0) / CALLS * 1e6;\n"
	"\t\tclean(names);\n"
	"\t\tt0 = now();\n"
	"\t\tfor (int i = 0; i < CALLS; i++) {\n"
	"#pragma io sig tmp random_access size_per_io(chunk)\n"
	"\t\t\tfd = open(names[i], O_CREAT | O_WRONLY | O_TRUNC, 0600);\n"
	"\t\t\tif (fd < 0 || close(fd))\n"
	"\t\t\t\treturn 1;\n"
	"\t\t}\n"
	"\t\tannotated[b] = (now() - t0) / CALLS * 1e6;\n"
	"\t\tclean(names);\n"
	"\t}\n"
	"\tqsort(plain, BATCHES, sizeof(double), cmp);\n"
	"\tqsort(annotated, BATCHES, sizeof(double), cmp);\n"
	"\tprintf(\"%.17g %.17g\\n\", plain[BATCHES / 2], annotated[BATCHES / 2]);\n"
	"\treturn 0;\n"
	"}\n";

/* Runs argv (output to `out` if not NULL) in directory dir; 0 if it exits 0. */
static int run(char *const argv[], const char *dir, const char *out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, r;

	posix_spawn_file_actions_init(&fa);
	if (dir)
		posix_spawn_file_actions_addchdir_np(&fa, dir);
	if (out)
		posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return -1;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

/* The directory of this program. */
static bool self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

/* The plugins of the build tree: gcc, clang-14, clang-16 when built. */
static unsigned default_compilers(struct compiler *c)
{
	char self[PATH_MAX - 64];
	unsigned n = 0;

	if (!self_dir(self, sizeof(self)))
		return 0;
	snprintf(c[n].plugin, sizeof(c[n].plugin), "%s/../../gcc-plugin/iosig.so", self);
	if (access(c[n].plugin, R_OK) == 0) {
		c[n].kind = "gcc";
		snprintf(c[n].cc, sizeof(c[n].cc), "gcc");
		n++;
	}
	for (unsigned v = 14; v <= 20 && n < MAX_COMPILERS; v++) {
		snprintf(c[n].plugin, sizeof(c[n].plugin), "%s/../../llvm-pass/clang-%u/iosig-clang.so",
			 self, v);
		if (access(c[n].plugin, R_OK) != 0)
			continue;
		c[n].kind = "clang";
		snprintf(c[n].cc, sizeof(c[n].cc), "clang-%u", v);
		n++;
	}
	return n;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_plugin_open [--compiler gcc|clang --cc DRIVER --plugin PATH]... "
		"[--libdir DIR] [--include DIR]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct compiler comps[MAX_COMPILERS];
	char self[PATH_MAX - 64], libdir[PATH_MAX], dir[PATH_MAX], src[PATH_MAX + 16];
	unsigned n = 0;
	struct json_writer w;
	FILE *f;

	memset(comps, 0, sizeof(comps));
	if (!self_dir(self, sizeof(self)))
		return 1;
	snprintf(libdir, sizeof(libdir), "%s/../../libiosig", self);
	for (int i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return usage();
		if (strcmp(argv[i], "--compiler") == 0) {
			if (n == MAX_COMPILERS || (strcmp(v, "gcc") != 0 && strcmp(v, "clang") != 0))
				return usage();
			comps[n++].kind = strcmp(v, "gcc") == 0 ? "gcc" : "clang";
		} else if (strcmp(argv[i], "--cc") == 0 && n > 0) {
			snprintf(comps[n - 1].cc, sizeof(comps[n - 1].cc), "%s", v);
		} else if (strcmp(argv[i], "--plugin") == 0 && n > 0) {
			snprintf(comps[n - 1].plugin, sizeof(comps[n - 1].plugin), "%s", v);
		} else if (strcmp(argv[i], "--libdir") == 0) {
			snprintf(libdir, sizeof(libdir), "%s", v);
		} else {
			return usage();
		}
	}
	if (n == 0)
		n = default_compilers(comps);
	if (n == 0) {
		fprintf(stderr, "bench_plugin_open: no compiler plugin built; build one or give "
			"--compiler/--cc/--plugin\n");
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		if (!comps[i].cc[0] || access(comps[i].plugin, R_OK) != 0) {
			fprintf(stderr, "bench_plugin_open: compiler %u needs --cc and a readable "
				"--plugin\n", i + 1);
			return 2;
		}

	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
			  : getenv("TMPDIR")		 ? getenv("TMPDIR")
							 : "/tmp";
	snprintf(dir, sizeof(dir), "%s/iosig-bench-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(src, sizeof(src), "%s/open.c", dir);
	f = fopen(src, "w");
	if (!f || fputs(program, f) < 0 || fclose(f) != 0) {
		perror(src);
		return 1;
	}
	/* Decide, do not redirect; no log. */
	setenv("IOSIG_DRYRUN", "1", 1);
	unsetenv("IOSIG_LOG");
	unsetenv("IOSIG_DISABLE");

	/* Build every program, then run them in turns. */
	char exes[MAX_COMPILERS][PATH_MAX + 16];
	double plain[MAX_COMPILERS][ROUNDS], annotated[MAX_COMPILERS][ROUNDS];
	for (unsigned i = 0; i < n; i++) {
		char fplugin[PATH_MAX + 16], fpass[PATH_MAX + 24], ldir[PATH_MAX + 8];
		char rpath[PATH_MAX + 16];
		bool clang = strcmp(comps[i].kind, "clang") == 0;

		snprintf(exes[i], sizeof(exes[i]), "%s/open-%u", dir, i);
		snprintf(fplugin, sizeof(fplugin), "-fplugin=%s", comps[i].plugin);
		snprintf(fpass, sizeof(fpass), "-fpass-plugin=%s", comps[i].plugin);
		snprintf(ldir, sizeof(ldir), "-L%s", libdir);
		snprintf(rpath, sizeof(rpath), "-Wl,-rpath,%s", libdir);
		char *cc_argv[] = { comps[i].cc, "-O2", fplugin, src, "-o", exes[i], ldir, "-liosig",
				    rpath, clang ? fpass : NULL, NULL };

		if (run(cc_argv, NULL, NULL) != 0) {
			fprintf(stderr, "bench_plugin_open: %s %s could not build %s\n", comps[i].cc,
				fplugin, src);
			return 1;
		}
	}
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned i = 0; i < n; i++) {
			char out[PATH_MAX + 16];
			char *run_argv[] = { exes[i], NULL };

			snprintf(out, sizeof(out), "%s/out", dir);
			f = NULL;
			if (run(run_argv, dir, out) != 0 || !(f = fopen(out, "r")) ||
			    fscanf(f, "%lf %lf", &plain[i][r], &annotated[i][r]) != 2) {
				fprintf(stderr, "bench_plugin_open: %s failed\n", exes[i]);
				return 1;
			}
			fclose(f);
			unlink(out);
		}

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "benchmark", "plugin_open");
	json_str(&w, "dir", tmp);
	json_int(&w, "rounds", ROUNDS);
	json_num(&w, "target_extra_us", 20);
	json_arr_begin(&w, "compilers");
	for (unsigned i = 0; i < n; i++) {
		double extra[ROUNDS];

		for (unsigned r = 0; r < ROUNDS; r++)
			extra[r] = annotated[i][r] - plain[i][r];
		json_obj_begin(&w, NULL);
		json_str(&w, "compiler", comps[i].kind);
		json_str(&w, "cc", comps[i].cc);
		json_str(&w, "plugin", comps[i].plugin);
		json_num(&w, "create_plain_us", bench_median(plain[i], ROUNDS));
		json_num(&w, "create_annotated_us", bench_median(annotated[i], ROUNDS));
		json_num(&w, "create_extra_us", bench_median(extra, ROUNDS));
		json_obj_end(&w);
		unlink(exes[i]);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	unlink(src);
	rmdir(dir);
	return json_finish(&w) ? 1 : 0;
}
