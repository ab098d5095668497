/* SPDX-License-Identifier: MIT */
/*
 * bench_plugin_compile.c - what loading an iosig compiler plugin costs
 * when it has nothing to do: a large generated C file without pragmas (tens
 * of thousands of lines of ordinary code, with open/fopen calls) is compiled
 * with and without the plugin, alternately, RUNS times per optimisation
 * level.  The compiler is a parameter: GCC loads iosig.so with -fplugin,
 * clang loads iosig-clang.so with -fplugin and -fpass-plugin.  Prints one JSON object with the median CPU time (user + system
 * of the compiler and its children) of each and their ratio, and the median
 * and quartiles of the ratios of the pairs of compiles run back to back
 * (which see the same load on a shared machine); the target is a ratio of
 * at most 1.02.  With --instructions it also counts the instructions the
 * compiler executes (valgrind's cachegrind, summed over the driver and its
 * children), a figure a loaded machine cannot disturb.
 *
 * usage: bench_plugin_compile [--compiler gcc|clang] [--cc DRIVER] [--plugin PATH]
 *                             [--runs N] [--functions N] [--keep DIR] [--opt -On]...
 *                             [--instructions]
 * --gcc DRIVER is --compiler gcc --cc DRIVER.  The plugin defaults to the one
 * in the build tree next to this program: ../../gcc-plugin/iosig.so, or
 * ../../llvm-pass/clang-N/iosig-clang.so for a driver named clang-N.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "json.h"

extern char **environ;

#define MAX_RUNS 101

struct opts {
	const char *compiler;   /* "gcc" or "clang" */
	const char *cc;         /* the driver */
	char plugin[PATH_MAX];
	unsigned runs;
	unsigned functions;
	const char *keep;
	const char *levels[4];  /* optimisation levels, default -O0 and -O2 */
	unsigned nlevels;
	bool instructions;      /* also count instructions under valgrind */
};

/* A deterministic stream of small numbers for the generator. */
static uint32_t rng_state = 12345;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 16) % n;
}

/*
 * Writes the C file: a few types and helpers, then `functions` functions of
 * about twenty lines each mixing arithmetic, loops, branches, structure
 * accesses, string handling and file calls.
 */
static void generate(FILE *f, unsigned functions)
{
	fputs("#include <fcntl.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
	      "#include <string.h>\n#include <unistd.h>\n\n", f);
	fputs("struct rec { long id; double weight; char name[32]; int tags[8]; };\n"
	      "struct table { struct rec *rows; size_t n, cap; };\n"
	      "static int cmp_rec(const void *a, const void *b)\n"
	      "{\n"
	      "\tconst struct rec *x = a, *y = b;\n"
	      "\treturn (x->id > y->id) - (x->id < y->id);\n"
	      "}\n"
	      "static int table_add(struct table *t, long id, double w)\n"
	      "{\n"
	      "\tif (t->n == t->cap) {\n"
	      "\t\tsize_t cap = t->cap ? 2 * t->cap : 16;\n"
	      "\t\tstruct rec *r = realloc(t->rows, cap * sizeof(*r));\n"
	      "\t\tif (!r)\n\t\t\treturn -1;\n"
	      "\t\tt->rows = r;\n\t\tt->cap = cap;\n"
	      "\t}\n"
	      "\tt->rows[t->n].id = id;\n\tt->rows[t->n].weight = w;\n"
	      "\tsnprintf(t->rows[t->n].name, sizeof(t->rows[t->n].name), \"r%ld\", id);\n"
	      "\tt->n++;\n\treturn 0;\n}\n\n", f);
	for (unsigned i = 0; i < functions; i++) {
		unsigned a = 1 + rnd(97), b = 1 + rnd(31), c = rnd(4);

		fprintf(f,
			"long work_%u(struct table *t, const char *dir, int n)\n"
			"{\n"
			"\tchar path[256];\n"
			"\tlong sum = %u;\n"
			"\tint fd;\n\n"
			"\tfor (int i = 0; i < n; i++) {\n"
			"\t\tif (table_add(t, (long)i * %u + %u, i / %u.0) < 0)\n"
			"\t\t\treturn -1;\n"
			"\t\tsum += t->rows[t->n - 1].id %% %u;\n"
			"\t\tswitch ((i + %u) & 3) {\n"
			"\t\tcase 0: sum ^= sum << 1; break;\n"
			"\t\tcase 1: sum += strlen(t->rows[t->n - 1].name); break;\n"
			"\t\tdefault: sum -= t->rows[t->n - 1].tags[i & 7]; break;\n"
			"\t\t}\n"
			"\t}\n"
			"\tqsort(t->rows, t->n, sizeof(*t->rows), cmp_rec);\n"
			"\tsnprintf(path, sizeof(path), \"%%s/f%u\", dir);\n",
			i, a, a, b, b, a + b, c, i);
		if (i % 3 == 0)
			fputs("\tfd = open(path, O_CREAT | O_WRONLY, 0600);\n"
			      "\tif (fd >= 0 && write(fd, &sum, sizeof(sum)) < 0)\n"
			      "\t\tsum = -sum;\n"
			      "\tif (fd >= 0)\n\t\tclose(fd);\n", f);
		else
			fputs("\tFILE *fp = fopen(path, \"r\");\n"
			      "\tif (fp && fread(&sum, sizeof(sum), 1, fp) != 1)\n"
			      "\t\tsum++;\n"
			      "\tif (fp)\n\t\tfclose(fp);\n"
			      "\tfd = 0;\n", f);
		fputs("\treturn sum + fd;\n}\n\n", f);
	}
}

/* Lines of the file at path, or -1. */
static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Runs argv; returns the CPU seconds (user + system) of the child, or a
 * negative number if it did not exit 0.  *ret_wall gets the wall time. */
static double run(char *const argv[], double *ret_wall)
{
	struct rusage ru;
	double t0 = bench_now();
	int status;
	pid_t pid;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return -1;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	*ret_wall = bench_now() - t0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/*
 * Instructions executed by argv (a compiler command) and its children under
 * valgrind --tool=cachegrind: the sum of every process's "I refs".  -1 if
 * valgrind is missing or the command failed.
 */
static double instructions(char *const argv[], const char *dir)
{
	char log[PATH_MAX + 16], line[512];
	char *vargv[16];
	double total = 0;
	int n = 0, found = 0;
	double wall;
	FILE *f;

	snprintf(log, sizeof(log), "--log-file=%s/vg.%%p", dir);
	vargv[n++] = "valgrind";
	vargv[n++] = "--tool=cachegrind";
	vargv[n++] = "--cache-sim=no";
	vargv[n++] = "--cachegrind-out-file=/dev/null";
	vargv[n++] = "--trace-children=yes";
	vargv[n++] = log;
	for (int i = 0; argv[i] && n < 15; i++)
		vargv[n++] = argv[i];
	vargv[n] = NULL;
	if (run(vargv, &wall) < 0)
		return -1;
	/* One log per process: read and remove them. */
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "cat %s/vg.* && rm -f %s/vg.*", dir, dir);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "I   refs:"), digits[64];
		size_t k = 0;

		if (!p)
			continue;
		for (p += 9; *p && *p != '\n' && k + 1 < sizeof(digits); p++)
			if (*p >= '0' && *p <= '9')
				digits[k++] = *p;
		digits[k] = '\0';
		total += strtod(digits, NULL);
		found++;
	}
	if (pclose(f) != 0 || !found)
		return -1;
	return total;
}

/* The plugin of the build tree for o's compiler, or "" if unknown. */
static void default_plugin(struct opts *o)
{
	char self[PATH_MAX - 64];
	const char *base = strrchr(o->cc, '/');
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	unsigned major;

	base = base ? base + 1 : o->cc;
	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (strcmp(o->compiler, "gcc") == 0)
		snprintf(o->plugin, sizeof(o->plugin), "%s/../../gcc-plugin/iosig.so", self);
	else if (sscanf(base, "clang-%u", &major) == 1 || sscanf(base, "clang++-%u", &major) == 1)
		snprintf(o->plugin, sizeof(o->plugin), "%s/../../llvm-pass/clang-%u/iosig-clang.so",
			 self, major);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	o->compiler = "gcc";
	o->cc = NULL;
	o->runs = 15;
	o->functions = 1600;
	o->keep = NULL;
	o->nlevels = 0;
	o->instructions = false;
	o->plugin[0] = '\0';
	for (int i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--instructions") == 0) {
			o->instructions = true;
			i--;
			continue;
		}
		if (!v)
			goto usage;
		if (strcmp(argv[i], "--gcc") == 0) {
			o->compiler = "gcc";
			o->cc = v;
		} else if (strcmp(argv[i], "--compiler") == 0) {
			if (strcmp(v, "gcc") != 0 && strcmp(v, "clang") != 0)
				goto usage;
			o->compiler = v;
		} else if (strcmp(argv[i], "--cc") == 0) {
			o->cc = v;
		} else if (strcmp(argv[i], "--plugin") == 0)
			snprintf(o->plugin, sizeof(o->plugin), "%s", v);
		else if (strcmp(argv[i], "--runs") == 0)
			o->runs = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(argv[i], "--functions") == 0)
			o->functions = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(argv[i], "--keep") == 0)
			o->keep = v;
		else if (strcmp(argv[i], "--opt") == 0 && o->nlevels < 4)
			o->levels[o->nlevels++] = v;
		else
			goto usage;
	}
	if (!o->nlevels) {
		o->levels[o->nlevels++] = "-O0";
		o->levels[o->nlevels++] = "-O2";
	}
	if (o->runs < 1 || o->runs > MAX_RUNS || o->functions < 1 || o->functions > 100000)
		goto usage;
	if (!o->cc)
		o->cc = o->compiler;
	if (!o->plugin[0])
		default_plugin(o);
	if (access(o->plugin, R_OK) != 0) {
		fprintf(stderr, "bench_plugin_compile: no plugin at '%s': build it, or give --plugin "
			"PATH\n", o->plugin);
		return -1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: bench_plugin_compile [--compiler gcc|clang] [--cc DRIVER] "
		"[--plugin PATH] [--runs 1..%d] [--functions N] [--keep DIR] [--opt -On]... "
		"[--instructions]\n", MAX_RUNS);
	return -1;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], src[PATH_MAX + 16], obj[PATH_MAX + 16], fplugin[PATH_MAX + 16];
	char fpass[PATH_MAX + 24];
	struct json_writer w;
	struct opts o;
	long lines;
	FILE *f;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (o.keep) {
		snprintf(dir, sizeof(dir), "%s", o.keep);
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			perror(dir);
			return 1;
		}
	} else {
		snprintf(dir, sizeof(dir), "%s/iosig-bench-XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 1;
		}
	}
	snprintf(src, sizeof(src), "%s/big.c", dir);
	snprintf(obj, sizeof(obj), "%s/big.o", dir);
	snprintf(fplugin, sizeof(fplugin), "-fplugin=%s", o.plugin);
	snprintf(fpass, sizeof(fpass), "-fpass-plugin=%s", o.plugin);
	/* clang loads the same file as an LLVM pass plugin too. */
	bool clang = strcmp(o.compiler, "clang") == 0;
	f = fopen(src, "w");
	if (!f) {
		perror(src);
		return 1;
	}
	generate(f, o.functions);
	if (fclose(f) != 0 || (lines = count_lines(src)) < 0) {
		perror(src);
		return 1;
	}

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "benchmark", "plugin_compile");
	json_str(&w, "compiler", o.compiler);
	json_str(&w, "cc", o.cc);
	json_str(&w, "plugin", o.plugin);
	json_int(&w, "source_lines", lines);
	json_int(&w, "runs", o.runs);
	json_num(&w, "target_ratio", 1.02);
	json_arr_begin(&w, "levels");
	for (unsigned l = 0; l < o.nlevels; l++) {
		const char *level = o.levels[l];
		double cpu[2][MAX_RUNS], wall[2][MAX_RUNS];
		char *argv_c[] = { (char *)o.cc, (char *)level, "-c", src, "-o", obj, NULL, NULL,
				   NULL };

		for (unsigned r = 0; r < o.runs; r++) {
			/* Alternate which goes first so drift hits both alike. */
			for (int k = 0; k < 2; k++) {
				int with = (int)((r + (unsigned)k) & 1);

				argv_c[6] = with ? fplugin : NULL;
				argv_c[7] = with && clang ? fpass : NULL;
				cpu[with][r] = run(argv_c, &wall[with][r]);
				if (cpu[with][r] < 0) {
					fprintf(stderr, "bench_plugin_compile: %s %s -c %s %s %s failed\n",
						o.cc, level, src, with ? fplugin : "",
						with && clang ? fpass : "");
					return 1;
				}
			}
		}
		double pair[MAX_RUNS];

		for (unsigned r = 0; r < o.runs; r++)
			pair[r] = cpu[1][r] / cpu[0][r];
		/* bench_median sorts: the quartiles are read from the sorted array. */
		double pmed = bench_median(pair, o.runs);
		double q1 = pair[o.runs / 4], q3 = pair[(3 * o.runs) / 4];
		double c0 = bench_median(cpu[0], o.runs), c1 = bench_median(cpu[1], o.runs);
		double w0 = bench_median(wall[0], o.runs), w1 = bench_median(wall[1], o.runs);

		json_obj_begin(&w, NULL);
		json_str(&w, "opt", level);
		json_num(&w, "median_cpu_s_without", c0);
		json_num(&w, "median_cpu_s_with", c1);
		json_num(&w, "cpu_ratio", c1 / c0);
		json_num(&w, "pair_cpu_ratio_median", pmed);
		json_num(&w, "pair_cpu_ratio_q1", q1);
		json_num(&w, "pair_cpu_ratio_q3", q3);
		if (o.instructions) {
			double i0, i1;

			argv_c[6] = NULL;
			argv_c[7] = NULL;
			i0 = instructions(argv_c, dir);
			argv_c[6] = fplugin;
			argv_c[7] = clang ? fpass : NULL;
			i1 = instructions(argv_c, dir);
			if (i0 <= 0 || i1 <= 0) {
				fprintf(stderr, "bench_plugin_compile: counting instructions needs "
					"valgrind (cachegrind)\n");
				return 1;
			}
			json_num(&w, "instructions_without", i0);
			json_num(&w, "instructions_with", i1);
			json_num(&w, "instruction_ratio", i1 / i0);
		}
		json_num(&w, "median_wall_s_without", w0);
		json_num(&w, "median_wall_s_with", w1);
		json_num(&w, "wall_ratio", w1 / w0);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	if (!o.keep) {
		unlink(src);
		unlink(obj);
		rmdir(dir);
	}
	return json_finish(&w) ? 1 : 0;
}
