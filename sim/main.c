/* SPDX-License-Identifier: MIT */
/*
 * main.c - the iosig-sim command line (see iosig-sim(1) and docs/sim.md).
 *
 *   iosig-sim --policy NAME [--policy-opt k=v]...
 *             (--trace FILE --format F | --workload NAME[:k=v,...] [--workload-opt k=v]...)
 *             [--device SPEC]... [--seed N] [--json FILE] [--plot DIR]
 *   iosig-sim calibrate (--drive NAME)... | --all  [--dir DIR] [--json FILE] [--plot DIR] [--check]
 *   iosig-sim --list-policies | --help | --version
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "dev.h"
#include "engine.h"
#include "gen.h"
#include "json.h"
#include "plot.h"
#include "trace.h"

#ifndef IOSIG_VERSION_STRING
#define IOSIG_VERSION_STRING "0.1.0"
#endif

#define EXIT_USAGE 2
#define MAX_OPT_TEXT 4096

static const char *prog = "iosig-sim";

static void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "iosig-sim: MESSAGE" on stderr.  format(printf, 1, 0): checks callers'
 * formats and accepts the va_list. */
__attribute__((format(printf, 1, 0)))
static void vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void errmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

/* The message and the hint to --help; returns EXIT_USAGE. */
static int usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return EXIT_USAGE;
}

static void list_policies(FILE *fp, bool with_opts)
{
	for (size_t i = 0; i < policy_count(); i++) {
		const struct policy_ops *ops = policy_at(i);

		if (with_opts) {
			fputc('\n', fp);
			policy_help(ops, fp);
		} else {
			fprintf(fp, "  %-12s %s\n", ops->name, ops->summary ? ops->summary : "");
		}
	}
}

static void help(FILE *fp)
{
	fprintf(fp,
"Usage: %s --policy NAME [--policy-opt OPT=VAL]...\n"
"                 (--trace FILE --format FORMAT | --workload NAME[:OPT=VAL,...])\n"
"                 [--device SPEC]... [--closed-loop [--iodepth N] [--think TIME]]\n"
"                 [--seed N] [--json FILE] [--plot DIR]\n"
"       %s calibrate (--drive NAME)... | --all [--dir DIR] [--json FILE] [--plot DIR] [--check]\n"
"       %s --list-policies | --help | --version\n"
"\n"
"Replays a block trace or a generated workload through an I/O scheduling\n"
"policy of iosigd on simulated devices, and reports latency, completion time,\n"
"disk arm movements, bytes and utilization per device.\n"
"\n"
"Options:\n"
"  -p, --policy NAME        scheduling policy (below); NAME:opt=val,... also works\n"
"  -o, --policy-opt OPT=VAL policy option (repeatable)\n"
"  -t, --trace FILE         block trace to replay ('-' = standard input)\n"
"  -f, --format FORMAT      trace format (below)\n"
"      --trace-device DEV   keep only this trace device (DiskSim/MQSim/CSV number,\n"
"                           blkparse 'major,minor'); default: all\n"
"      --hint STREAM=SIZE[,sequential|random]\n"
"                           the signature a stream's code declares (size_per_io,\n"
"                           pattern): priors for policies with use_hints=1 (repeatable;\n"
"                           generated workloads declare their own)\n"
"  -w, --workload NAME      generated workload (below); NAME:opt=val,... also works\n"
"  -W, --workload-opt OPT=VAL  workload option (repeatable)\n"
"  -d, --device SPEC        simulated device CLASS[:MODEL][,opt=val...] (repeatable;\n"
"                           the first is the workload's home; default hdd:generic)\n"
"      --closed-loop        each stream keeps --iodepth requests outstanding, in its\n"
"                           order: its first request arrives at its time in the\n"
"                           trace or workload, every later one --think after one of\n"
"                           its requests completes (a faster device finishes sooner)\n"
"      --iodepth N          closed loop: requests outstanding per stream (default 1,\n"
"                           or the workload's own)\n"
"      --think TIME         closed loop: added delay from a completion to the\n"
"                           stream's next arrival (default 0)\n"
"  -s, --seed N             seed of the generators (default 1)\n"
"  -n, --max-requests N     stop after N requests of the workload\n"
"      --drain TIME         keep serving policy wake-ups this long after the\n"
"                           workload ends (default 60s)\n"
"  -j, --json FILE          write the results as JSON ('-' = standard output)\n"
"  -P, --plot DIR           write plot data, a gnuplot script and PNGs into DIR\n"
"  -q, --quiet              no summary and no progress\n"
"      --list-policies      list the policies with their options\n"
"  -h, --help               this text\n"
"  -V, --version\n"
"\n"
"Units: sizes 4KiB, 64K, 2MB (powers of 1024); times 500ms, 5s, 100us; rates 2MB/s.\n",
		prog, prog, prog);
	fprintf(fp, "\nPolicies (--policy NAME, --policy-opt OPT=VAL):\n");
	list_policies(fp, false);
	fprintf(fp, "\nPolicy options:");
	list_policies(fp, true);
	fprintf(fp, "\nTrace formats:\n");
	for (unsigned i = 0; sim_trace_formats[i]; i++)
		fprintf(fp, "  %-10s %s\n", sim_trace_formats[i]->name, sim_trace_formats[i]->summary);
	fprintf(fp, "\nWorkloads:");
	sim_gen_help(fp);
	fprintf(fp, "\nDevices:");
	sim_dev_help(fp);
	fprintf(fp, "\nDiskSim drive files are looked for in: %s\n", sim_dev_disksim_path());
	fprintf(fp, "\nSee iosig-sim(1) and docs/sim.md.\n");
}

/* A policy or workload given as --x NAME[:opt=val,...] and --x-opt OPT=VAL
 * options, in any order. */
struct spec {
	char name[512];
	char opts[MAX_OPT_TEXT];
};

static bool spec_name(struct spec *s, const char *arg, const char *flag)
{
	if (s->name[0]) {
		usage_err("%s given twice", flag);
		return false;
	}
	if (!*arg || strlen(arg) >= sizeof(s->name)) {
		usage_err("%s: expected NAME[:opt=val,...] of at most %zu characters", flag,
			  sizeof(s->name) - 1);
		return false;
	}
	snprintf(s->name, sizeof(s->name), "%s", arg);
	return true;
}

static bool spec_opt(struct spec *s, const char *arg, const char *flag)
{
	size_t n = strlen(s->opts);

	if (!strchr(arg, '=')) {
		usage_err("%s '%s': expected OPT=VALUE", flag, arg);
		return false;
	}
	if (n + strlen(arg) + 2 > sizeof(s->opts)) {
		usage_err("%s: too many options", flag);
		return false;
	}
	snprintf(s->opts + n, sizeof(s->opts) - n, "%s%s", n ? "," : "", arg);
	return true;
}

/*
 * One value with units of a command-line option (--drain, --think, --hint's
 * size) as a policy option of that type named name, at most max: through
 * policy_opts_set() and so the project's one unit parser, with its messages.
 * 0, or -EINVAL with the reason in err and *ret untouched.
 */
static int parse_units(enum policy_opt_type type, const char *name, const char *value,
		       uint64_t max, uint64_t *ret, char *err, size_t errlen)
{
	const struct policy_opt tab[] = {
		{ .name = name, .type = type, .off = 0, .def = "0", .max = max },
		{ .name = NULL },
	};

	return policy_opts_set(tab, ret, name, value, err, errlen);
}

/* --hint STREAM=SIZE[,sequential|random]: the stream's signature. */
static bool parse_hint(const char *arg, struct sim_hint *ret)
{
	const char *eq = strchr(arg, '='), *comma;
	char num[32], size[64], err[256];
	uint64_t stream, bytes = 0;

	if (!eq || (size_t)(eq - arg) >= sizeof(num)) {
		usage_err("--hint '%s': expected STREAM=SIZE[,sequential|random], e.g. 1234=64KiB,sequential",
			  arg);
		return false;
	}
	snprintf(num, sizeof(num), "%.*s", (int)(eq - arg), arg);
	if (!sim_parse_u64(num, &stream) || stream > UINT32_MAX) {
		usage_err("--hint '%s': stream '%s' is not a number (a pid or stream id)", arg, num);
		return false;
	}
	comma = strchr(eq + 1, ',');
	snprintf(size, sizeof(size), "%.*s", (int)(comma ? comma - eq - 1 : (long)strlen(eq + 1)),
		 eq + 1);
	if (parse_units(POLICY_OPT_SIZE, "size", size, 1ull << 40, &bytes, err, sizeof(err)) < 0) {
		usage_err("--hint '%s': %s", arg, err);
		return false;
	}
	ret->stream = (uint32_t)stream;
	ret->size = bytes;
	ret->pattern = POLICY_PATTERN_UNKNOWN;
	if (comma) {
		if (!strcmp(comma + 1, "sequential")) {
			ret->pattern = POLICY_PATTERN_SEQUENTIAL;
		} else if (!strcmp(comma + 1, "random")) {
			ret->pattern = POLICY_PATTERN_RANDOM;
		} else {
			usage_err("--hint '%s': pattern '%s' is neither sequential nor random", arg,
				  comma + 1);
			return false;
		}
	}
	return true;
}

/* "NAME[:opts]" followed by the --x-opt options. */
static void spec_join(const struct spec *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", s->name, s->opts[0] ? (strchr(s->name, ':') ? "," : ":") : "",
		 s->opts);
}

/* ---- progress ---- */

struct run_ctx {
	struct sim_plot *plot;
	bool progress;
	double last, start;
	uint64_t last_completed;
};

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_complete(void *ctx, const struct policy_req *req, uint64_t done_ns)
{
	struct run_ctx *c = ctx;

	if (c->plot)
		sim_plot_complete(c->plot, req, done_ns);
}

static void on_progress(void *ctx, uint64_t now_ns, uint64_t completed, double frac)
{
	struct run_ctx *c = ctx;
	double t = wall();

	if (!c->progress || t - c->last < 0.25)
		return;
	if (frac >= 0)
		fprintf(stderr, "\r[%5.1f%%] ", frac * 100);
	else
		fprintf(stderr, "\r[ ... ] ");
	fprintf(stderr, "%" PRIu64 " requests done, simulated %.3f s, %.0f requests/s   ",
		completed, now_ns / 1e9, (double)(completed - c->last_completed) / (t - c->last));
	c->last = t;
	c->last_completed = completed;
}

/* ---- the summary on stdout ---- */

static void summary(const struct sim_engine *e, struct sim_dev **devs, unsigned ndev)
{
	const struct sim_metrics *m = sim_engine_metrics(e);
	double span = m->completed ? (m->last_completion_ns - m->first_arrival_ns) / 1e9 : 0;

	printf("requests   %" PRIu64 " (%" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64
	       " flushes, %" PRIu64 " errors)\n", m->completed, m->reads, m->writes, m->flushes,
	       m->errors);
	printf("makespan   %.6f s\n", span);
	printf("latency    mean %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us\n",
	       pol_hist_mean(&m->lat) / 1e3, pol_hist_percentile(&m->lat, 99) / 1e3,
	       pol_hist_percentile(&m->lat, 99.9) / 1e3, m->lat.count ? m->lat.max / 1e3 : 0.0);
	for (unsigned d = 0; d < ndev; d++) {
		const struct sim_dev_counters *c = sim_engine_dev_counters(e, d);

		printf("%-10s %s:%s  busy %.6f s (%.1f%%)  read %" PRIu64 " B  written %" PRIu64 " B",
		       devs[d]->name, devs[d]->name[0] == 'h' ? "hdd" : devs[d]->name[0] == 's' ? "ssd"
		       : devs[d]->name[0] == 'n' ? "nvm" : "ram", devs[d]->model, c->busy_ns / 1e9,
		       span > 0 ? c->busy_ns / 1e9 / span * 100 : 0, c->bytes_read, c->bytes_written);
		if (devs[d]->hdd) {
			const struct sim_hdd_stats *s = sim_hdd_stats(devs[d]->hdd);

			printf("  arm moves %" PRIu64 "  TMD %" PRIu64 " cyl", s->arm_moves, s->tmd);
		}
		putchar('\n');
	}
}

/* The --json output: PATH, or stdout for "-"; NULL after saying why. */
static FILE *open_json(const char *path)
{
	FILE *fp = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!fp)
		errmsg("cannot write %s: %s", path, strerror(errno));
	return fp;
}

/* ---- run ---- */

static int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "policy-opt", required_argument, NULL, 'o' },
		{ "trace", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "trace-device", required_argument, NULL, 'D' },
		{ "hint", required_argument, NULL, 'H' },
		{ "workload", required_argument, NULL, 'w' },
		{ "workload-opt", required_argument, NULL, 'W' },
		{ "device", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "max-requests", required_argument, NULL, 'n' },
		{ "drain", required_argument, NULL, 'R' },
		{ "closed-loop", no_argument, NULL, 'C' },
		{ "iodepth", required_argument, NULL, 'I' },
		{ "think", required_argument, NULL, 'T' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "list-policies", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char policy[MAX_OPT_TEXT + 600], workload[MAX_OPT_TEXT + 600];
	const char *trace = NULL, *format = NULL, *json_path = NULL, *plot_dir = NULL;
	const char *devspec[SIM_MAX_DEVS];
	unsigned ndev = 0;
	struct sim_dev *devs[SIM_MAX_DEVS] = { 0 };
	uint64_t seed = 1, max_requests = 0, drain = 0, iodepth = 0, think = 0;
	bool closed_loop = false, think_set = false;
	int64_t trace_dev = -1;
	static struct spec pol_spec, wl_spec;
	static struct sim_hint hints[256];
	unsigned nhints = 0;
	bool quiet = false;
	struct sim_source *src = NULL;
	struct sim_engine *eng = NULL;
	struct run_ctx rc = { 0 };
	char err[1024];
	FILE *jf = NULL;
	int c, r, ret = EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, "p:o:t:f:w:W:d:s:n:j:P:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!spec_name(&pol_spec, optarg, "--policy"))
				return EXIT_USAGE;
			break;
		case 'o':
			if (!spec_opt(&pol_spec, optarg, "--policy-opt"))
				return EXIT_USAGE;
			break;
		case 't':
			trace = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'D': {
			uint64_t v, maj, min;
			char extra;

			if (sscanf(optarg, "%" SCNu64 ",%" SCNu64 "%c", &maj, &min, &extra) == 2 &&
			    maj < 4096 && min < (1u << 20))
				trace_dev = (int64_t)(maj << 20 | min);
			else if (sim_parse_u64(optarg, &v) && v <= UINT32_MAX)
				trace_dev = (int64_t)v;
			else
				return usage_err("--trace-device '%s': expected a number or major,minor",
						 optarg);
			break;
		}
		case 'H':
			if (nhints == sizeof(hints) / sizeof(hints[0]))
				return usage_err("more than %zu --hint options", sizeof(hints) / sizeof(hints[0]));
			if (!parse_hint(optarg, &hints[nhints++]))
				return EXIT_USAGE;
			break;
		case 'w':
			if (!spec_name(&wl_spec, optarg, "--workload"))
				return EXIT_USAGE;
			break;
		case 'W':
			if (!spec_opt(&wl_spec, optarg, "--workload-opt"))
				return EXIT_USAGE;
			break;
		case 'd':
			if (ndev == SIM_MAX_DEVS)
				return usage_err("more than %d devices", SIM_MAX_DEVS);
			devspec[ndev++] = optarg;
			break;
		case 's':
			if (!sim_parse_u64(optarg, &seed))
				return usage_err("--seed '%s': expected a non-negative integer", optarg);
			break;
		case 'n':
			if (!sim_parse_u64(optarg, &max_requests) || !max_requests)
				return usage_err("--max-requests '%s': expected a positive integer", optarg);
			break;
		case 'R':
			if (parse_units(POLICY_OPT_TIME, "drain", optarg, UINT64_MAX - 1, &drain, err,
					sizeof(err)) < 0)
				return usage_err("--drain: %s", err);
			break;
		case 'C':
			closed_loop = true;
			break;
		case 'I':
			if (!sim_parse_u64(optarg, &iodepth) || !iodepth || iodepth > 65536)
				return usage_err("--iodepth '%s': expected an integer from 1 to 65536", optarg);
			break;
		case 'T':
			if (parse_units(POLICY_OPT_TIME, "think", optarg, 3600 * POLICY_NS_PER_S, &think,
					err, sizeof(err)) < 0)
				return usage_err("--think: %s", err);
			think_set = true;
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'P':
			plot_dir = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'L':
			printf("Policies and their options (--policy NAME --policy-opt OPT=VAL):\n");
			list_policies(stdout, true);
			return 0;
		case 'h':
			help(stdout);
			return 0;
		case 'V':
			printf("iosig-sim %s\n", IOSIG_VERSION_STRING);
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	if (!pol_spec.name[0])
		return usage_err("no --policy given (try --policy noop; --list-policies lists them)");
	if (wl_spec.opts[0] && !wl_spec.name[0])
		return usage_err("--workload-opt without --workload");
	spec_join(&pol_spec, policy, sizeof(policy));
	spec_join(&wl_spec, workload, sizeof(workload));
	if (!trace == !workload[0])
		return usage_err("give exactly one of --trace FILE --format F or --workload NAME");
	if (trace && !format)
		return usage_err("--trace needs --format (blkparse, disksim, validate, mqsim, csv)");
	if (!trace && format)
		return usage_err("--format applies to --trace only");
	if (trace_dev >= 0 && !trace)
		return usage_err("--trace-device applies to --trace only");
	if (!ndev)
		devspec[ndev++] = "hdd:generic";

	for (unsigned d = 0; d < ndev; d++) {
		r = sim_dev_create(devspec[d], d, &devs[d], err, sizeof(err));
		if (r < 0) {
			ret = r == -ENOMEM ? EXIT_FAILURE : EXIT_USAGE;
			errmsg("%s", err);
			goto out;
		}
	}
	if (trace)
		r = sim_trace_open(trace, format, &src, err, sizeof(err));
	else
		r = sim_gen_create(workload, seed, devs[0]->info.capacity, &src, err, sizeof(err));
	if (r < 0) {
		ret = (r == -EINVAL || r == -ENOENT) && (!trace || !strstr(err, "cannot open"))
			      ? EXIT_USAGE : EXIT_FAILURE;
		errmsg("%s", err);
		goto out;
	}
	if ((iodepth || think_set) && !closed_loop && !src->closed_loop) {
		ret = usage_err("--iodepth and --think apply to closed-loop runs (--closed-loop, or "
				"a closed-loop workload or trace format)");
		goto out;
	}
	if (json_path && !(jf = open_json(json_path)))
		goto out;
	if (plot_dir && sim_plot_open(plot_dir, devs, ndev, &rc.plot, err, sizeof(err)) < 0) {
		errmsg("%s", err);
		goto out;
	}
	rc.progress = !quiet && isatty(STDERR_FILENO);
	rc.start = rc.last = wall();
	{
		struct sim_config cfg = {
			.policy = policy, .devs = devs, .ndev = ndev, .src = src,
			.trace_dev = trace_dev, .drain_ns = drain, .max_requests = max_requests,
			.closed_loop = closed_loop, .iodepth = (unsigned)iodepth, .think_ns = think,
			.hints = hints, .nhints = nhints,
			.ctx = &rc, .on_complete = on_complete, .on_progress = on_progress,
		};

		r = sim_engine_create(&cfg, &eng, err, sizeof(err));
		if (r < 0) {
			ret = r == -ENOMEM ? EXIT_FAILURE : EXIT_USAGE;
			errmsg("%s", err);
			goto out;
		}
	}
	r = sim_engine_run(eng, err, sizeof(err));
	if (rc.progress)
		fprintf(stderr, "\r%78s\r", "");
	if (r < 0) {
		errmsg("%s", err);
		goto out;
	}
	if (jf) {
		struct json_writer w;

		json_init(&w, jf, true);
		json_obj_begin(&w, NULL);
		json_str(&w, "tool", "iosig-sim");
		json_str(&w, "version", IOSIG_VERSION_STRING);
		json_obj_begin(&w, "config");
		json_str(&w, "policy", policy);
		if (trace) {
			json_str(&w, "trace", trace);
			json_str(&w, "format", format);
		} else {
			json_str(&w, "workload", workload);
		}
		json_arr_begin(&w, "devices");
		for (unsigned d = 0; d < ndev; d++)
			json_str(&w, NULL, devspec[d]);
		json_arr_end(&w);
		json_uint(&w, "seed", seed);
		if (closed_loop || iodepth || think_set) {
			json_bool(&w, "closed_loop", closed_loop);
			if (iodepth)
				json_uint(&w, "iodepth", iodepth);
			json_num(&w, "think_s", (double)think / 1e9);
		}
		json_obj_end(&w);
		sim_engine_report(eng, &w);
		json_obj_end(&w);
		if (json_finish(&w) < 0 || fflush(jf) != 0) {
			errmsg("error writing %s", json_path);
			goto out;
		}
	}
	if (rc.plot) {
		bool ran = false;

		if (sim_plot_finish(rc.plot, sim_engine_metrics(eng), &ran, err, sizeof(err)) < 0) {
			errmsg("%s", err);
			goto out;
		}
		if (!ran && !quiet)
			fprintf(stderr, "%s: gnuplot did not run (is gnuplot-nox installed?); data and "
				"plot.gp are in %s\n", prog, plot_dir);
	}
	if (!quiet && !(json_path && !strcmp(json_path, "-")))
		summary(eng, devs, ndev);
	{
		const struct sim_metrics *m = sim_engine_metrics(eng);

		/* Failed requests are results, not a failed run, but say so. */
		if (m->errors)
			fprintf(stderr, "%s: warning: %" PRIu64 " of %" PRIu64 " requests failed, the first "
				"at t = %.6f s with '%s' (a policy refuses requests it cannot place: "
				"check the device order, the first --device is the home device)\n",
				prog, m->errors, m->completed, m->first_error_ns / 1e9,
				strerror(-m->first_error));
	}
	if (!quiet && isatty(STDERR_FILENO))
		fprintf(stderr, "%s: %" PRIu64 " events in %.2f s\n", prog, sim_engine_events(eng),
			wall() - rc.start);
	ret = 0;
out:
	if (jf && jf != stdout)
		fclose(jf);
	sim_plot_close(rc.plot);
	sim_engine_destroy(eng);
	sim_source_destroy(src);
	for (unsigned d = 0; d < ndev; d++)
		sim_dev_destroy(devs[d]);
	return ret;
}

/* ---- calibrate ---- */

/* The DiskSim 4 validation drives kept in data/traces/disksim. */
static const char *const all_drives[] = {
	"atlas10k", "atlas_III", "barracuda", "cheetah4LP", "cheetah9LP", "dec_rz26", "hp_c2247a",
	"hp_c2490a", "hp_c3323a", "ibm18es", "st41601n", NULL,
};

/* First directory of the DiskSim path holding NAME.trace. */
static bool find_trace_dir(const char *drive, char *dir, size_t size)
{
	const char *p = sim_dev_disksim_path();

	while (*p) {
		size_t n = strcspn(p, ":");
		char path[4200];

		if (n && n < size) {
			snprintf(dir, size, "%.*s", (int)n, p);
			snprintf(path, sizeof(path), "%s/%s.trace", dir, drive);
			if (access(path, R_OK) == 0)
				return true;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return false;
}

static int cmd_calibrate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "drive", required_argument, NULL, 'r' },
		{ "all", no_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'D' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'P' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *drives[16], *dir = NULL, *json_path = NULL, *plot_dir = NULL;
	unsigned ndrives = 0;
	bool check = false, missed = false;
	struct sim_calib_result res[16];
	struct json_writer w;
	char err[1024];
	FILE *jf = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:aD:j:P:ch", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (ndrives == 16)
				return usage_err("calibrate: more than 16 drives");
			drives[ndrives++] = optarg;
			break;
		case 'a':
			for (unsigned i = 0; all_drives[i] && ndrives < 16; i++)
				drives[ndrives++] = all_drives[i];
			break;
		case 'D':
			dir = optarg;
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'P':
			plot_dir = optarg;
			break;
		case 'c':
			check = true;
			break;
		case 'h':
			printf("Usage: %s calibrate (--drive NAME)... | --all [--dir DIR] [--json FILE] "
			       "[--plot DIR] [--check]\n\n"
			       "Replays DIR/NAME.trace (DiskSim validate format: a real drive's requests\n"
			       "with their measured service times) through the HDD model configured from\n"
			       "DIR/NAME.{parv,diskspecs,model,seek} and reports the mean service time\n"
			       "error and the demerit (RMS horizontal distance between the measured and\n"
			       "predicted service time CDFs, in %% of the measured mean).  --check exits 1\n"
			       "if a drive misses a target (mean error <= %.0f%%, demerit <= %.0f%%).\n"
			       "DIR defaults to the first of %s holding NAME.trace.\n",
			       prog, SIM_CALIB_MAX_MEAN_ERR_PCT, SIM_CALIB_MAX_DEMERIT_PCT,
			       sim_dev_disksim_path());
			return 0;
		default:
			fprintf(stderr, "Try '%s calibrate --help'.\n", prog);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return usage_err("calibrate: unexpected argument '%s'", argv[optind]);
	if (!ndrives)
		return usage_err("calibrate: give --drive NAME (e.g. barracuda) or --all");
	if (plot_dir && sim_mkdirs(plot_dir) < 0) {
		errmsg("cannot create %s: %s", plot_dir, strerror(errno));
		return EXIT_FAILURE;
	}
	for (unsigned i = 0; i < ndrives; i++) {
		char d[4096], path[4300];
		FILE *cdf = NULL;
		int r;

		if (dir)
			snprintf(d, sizeof(d), "%s", dir);
		else if (!find_trace_dir(drives[i], d, sizeof(d))) {
			errmsg("calibrate: no %s.trace in %s (give --dir DIR)", drives[i],
			       sim_dev_disksim_path());
			return EXIT_FAILURE;
		}
		if (plot_dir) {
			snprintf(path, sizeof(path), "%s/calibration_%s.dat", plot_dir, drives[i]);
			cdf = fopen(path, "w");
			if (!cdf) {
				errmsg("cannot write %s: %s", path, strerror(errno));
				return EXIT_FAILURE;
			}
			fprintf(cdf, "# quantile measured_ms predicted_ms\n");
		}
		r = sim_calibrate(d, drives[i], &res[i], cdf, err, sizeof(err));
		if (cdf)
			fclose(cdf);
		if (r < 0) {
			errmsg("calibrate: %s", err);
			return EXIT_FAILURE;
		}
		if (plot_dir) {
			bool ran = false;

			if (sim_plot_calibration(plot_dir, drives[i], &ran, err, sizeof(err)) < 0) {
				errmsg("%s", err);
				return EXIT_FAILURE;
			}
		}
	}
	printf("%-12s %8s %12s %12s %10s %12s %10s  %s\n", "drive", "requests", "measured_ms",
	       "model_ms", "mean_err", "demerit_ms", "demerit", "targets");
	for (unsigned i = 0; i < ndrives; i++) {
		bool ok = res[i].mean_err_pct <= SIM_CALIB_MAX_MEAN_ERR_PCT &&
			  res[i].mean_err_pct >= -SIM_CALIB_MAX_MEAN_ERR_PCT &&
			  res[i].demerit_pct <= SIM_CALIB_MAX_DEMERIT_PCT;

		missed |= !ok;
		printf("%-12s %8" PRIu64 " %12.3f %12.3f %+9.2f%% %12.3f %9.2f%%  %s\n", res[i].drive,
		       res[i].n, res[i].meas_mean_ms, res[i].pred_mean_ms, res[i].mean_err_pct,
		       res[i].demerit_ms, res[i].demerit_pct, ok ? "met" : "MISSED");
	}
	if (json_path) {
		jf = open_json(json_path);
		if (!jf)
			return EXIT_FAILURE;
		json_init(&w, jf, true);
		json_obj_begin(&w, NULL);
		json_num(&w, "target_mean_err_pct", SIM_CALIB_MAX_MEAN_ERR_PCT);
		json_num(&w, "target_demerit_pct", SIM_CALIB_MAX_DEMERIT_PCT);
		json_arr_begin(&w, "drives");
		for (unsigned i = 0; i < ndrives; i++) {
			const struct sim_calib_result *x = &res[i];

			json_obj_begin(&w, NULL);
			json_str(&w, "drive", x->drive);
			json_uint(&w, "requests", x->n);
			json_num(&w, "measured_mean_ms", x->meas_mean_ms);
			json_num(&w, "model_mean_ms", x->pred_mean_ms);
			json_num(&w, "mean_err_pct", x->mean_err_pct);
			json_num(&w, "demerit_ms", x->demerit_ms);
			json_num(&w, "demerit_pct", x->demerit_pct);
			json_num(&w, "read_measured_mean_ms", x->read.meas_mean_ms);
			json_num(&w, "read_model_mean_ms", x->read.pred_mean_ms);
			json_num(&w, "write_measured_mean_ms", x->write.meas_mean_ms);
			json_num(&w, "write_model_mean_ms", x->write.pred_mean_ms);
			json_uint(&w, "read_hits", x->stats.read_hits);
			json_uint(&w, "read_misses", x->stats.read_misses);
			json_obj_end(&w);
		}
		json_arr_end(&w);
		json_obj_end(&w);
		json_finish(&w);
		if (jf != stdout)
			fclose(jf);
	}
	return check && missed ? EXIT_FAILURE : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "calibrate"))
		return cmd_calibrate(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	return cmd_run(argc, argv);
}
