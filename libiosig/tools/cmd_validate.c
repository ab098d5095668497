/* SPDX-License-Identifier: MIT */
/*
 * cmd_validate.c - `iosig validate [MOUNT...]`: the IOSIG paper's model
 * check (Sect. 7.1, Fig. 6) on this machine.  For chunk sizes from 512 B to
 * 64 MiB (powers of two plus a linear sweep near the block size) it measures
 * synchronous chunked writes (write + fsync per chunk, sequential appends
 * and random overwrites: the paper's dd experiment) on every mount side by
 * side, compares them with the throughput Eq. 3 predicts from the catalog
 * (probed values), and reports whether the model ranks the mounts as the
 * measurement does (docs/validation.md, iosig-validate(1)).
 *
 * Side by side: within one (size, pattern) cell the mounts take turns, one
 * write each, so a burst of load from other processes hits them all; cells
 * are repeated in rounds and medians are used.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fmt.h"
#include "json.h"
#include "probe.h"
#include "tool.h"
#include "tool_probe.h"

#define CMD "validate"
#define MiB (1024ull * 1024)

/* The target of docs/validation.md: the model picks the measured-fastest
 * mount in at least this share of cases ... */
#define TARGET_HIT 0.90
/* ... and the mount it picks reaches this share of the best one, always. */
#define TARGET_RATIO 0.85

extern char **environ;

struct opts {
	uint64_t min_size, max_size;
	unsigned sweep;        /* points of the linear sweep (0 = none) */
	bool seq, rand;        /* patterns */
	unsigned repeat;       /* rounds */
	double cell_time;      /* seconds per cell and round, shared by all mounts */
	unsigned min_ops;      /* writes per mount, cell and round, at least */
	unsigned max_ops;      /* ... and at most */
	const char *json;      /* file or "-" */
	const char *plot;      /* PNG file */
	struct tool_probe_opts common; /* --max-space, --quiet */
};

/* One mount under test. */
struct vmount {
	const struct iosig_mount *m;
	const char *label;     /* short name for tables and plots */
	struct prb_session *s;
	int fd_seq;            /* appended to, emptied when it reaches seq_span */
	int fd_rand;           /* written once, overwritten at random */
	uint64_t seq_span, rand_span;
	uint64_t append_pos;   /* current size of fd_seq */
	char why[400];         /* not measured: why */
	bool ok;               /* prepared and measuring */
	bool failed;           /* a write failed during the measurement */
};

/* One mount in one case. */
struct vcell {
	struct prb_samples t;      /* every write of every round, seconds */
	double *round_med;     /* median duration per round (NaN: none) */
	double model;          /* Eq. 3, bytes/s */
	double meas;           /* ds / median duration, bytes/s */
	double lo, hi;         /* ds / 75th and 25th percentile duration */
	double ci_lo, ci_hi;   /* 95 % interval of the median (boxplot notch), bytes/s */
	bool skip;             /* not measured for this size (space) */
};

/* One chunk size and pattern. */
struct vcase {
	uint64_t ds;
	bool random;
	bool sweep;            /* part of the linear sweep */
	struct vcell *c;       /* one per mount */
	int pick;              /* the model's choice (index), -1 if none */
	int best;              /* the measured-fastest, -1 if none */
	bool decisive;         /* best beats the runner-up beyond the spread */
	double ratio;          /* measured throughput of pick / of best */
	int pick_p, best_p;    /* the same among persistent mounts */
	bool decisive_p;
	double ratio_p;
};

struct summary {
	unsigned cases, hits, decisive, decisive_hits, below;
	double worst;          /* lowest ratio */
	unsigned pairs, pair_agree, pair_ties;
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig validate [OPTIONS] [MOUNT...]\n"
		"\n"
		"Checks the throughput model (IOSIG Eq. 3, with the catalog's probed values)\n"
		"against measurement: synchronous chunked writes (write + fsync per chunk,\n"
		"sequential appends and random overwrites) on every mount side by side, for\n"
		"chunk sizes from 512 B to 64 MiB plus a linear sweep near the block size.\n"
		"Prints a table and whether the model ranks the mounts as measured.\n"
		"Run 'iosig probe' on the mounts first.\n"
		"\n"
		"Options:\n"
		"      --min-size S    smallest chunk size (default 512)\n"
		"      --max-size S    largest chunk size (default 64MiB)\n"
		"      --sweep N       points of the linear sweep, steps of a quarter block\n"
		"                      (default 16; 0 = powers of two only)\n"
		"      --pattern P     seq, rand or both (default both)\n"
		"  -r, --repeat N      rounds; medians over all of them (default 3)\n"
		"  -t, --time T        time per chunk size, pattern and round, shared by the\n"
		"                      mounts (default 0.3s; each mount writes at least 3 chunks)\n"
		"  -s, --max-space S   space per mount (default 512MiB; never more than 10%% of\n"
		"                      the free space)\n"
		"  -j, --json FILE     write the results as JSON ('-' = stdout)\n"
		"  -p, --plot FILE     draw them as a PNG like the paper's Fig. 6 (gnuplot)\n"
		"  -q, --quiet         no progress bar and no table\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status: 0 done, 1 a mount or the output failed, 2 bad command line or\n"
		"unknown mount, 128+N interrupted by signal N.  See iosig-validate(1).\n");
}

/* A chunk size: a whole number of bytes, at least 1 (parse_opts() bounds
 * --max-size further). */
static int parse_chunk(const char *opt, const char *arg, uint64_t *ret)
{
	double v;

	if (tool_parse_value(CMD, opt, arg, IOSIG_DIM_SIZE, "a size such as 4KiB", &v))
		return TOOL_EXIT_USAGE;
	if (v < 1 || v > 1e15 || v != floor(v))
		return tool_usage_err(CMD, "--%s '%s': expected a whole number of bytes >= 1", opt,
				      arg);
	*ret = (uint64_t)v;
	return 0;
}

/* A count option in [min, max]. */
static int parse_count(const char *opt, const char *arg, unsigned min, unsigned max,
		       unsigned *ret)
{
	unsigned long long v;

	if (tool_parse_uint(CMD, opt, arg, min, max, 10, &v))
		return TOOL_EXIT_USAGE;
	*ret = (unsigned)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { OPT_MIN = 256, OPT_MAX, OPT_SWEEP, OPT_PATTERN };
	static const struct option longopts[] = {
		{ "min-size", required_argument, NULL, OPT_MIN },
		{ "max-size", required_argument, NULL, OPT_MAX },
		{ "sweep", required_argument, NULL, OPT_SWEEP },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "repeat", required_argument, NULL, 'r' },
		{ "time", required_argument, NULL, 't' },
		{ "max-space", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c, r;

	*o = (struct opts){
		.min_size = 512, .max_size = 64 * MiB, .sweep = 16, .seq = true, .rand = true,
		.repeat = 3, .cell_time = 0.3, .min_ops = 3, .max_ops = 64,
		.common.max_space = 512 * MiB,
	};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:t:s:j:p:qh", longopts, NULL)) != -1) {
		r = 0;
		switch (c) {
		case OPT_MIN:
			r = parse_chunk("min-size", optarg, &o->min_size);
			break;
		case OPT_MAX:
			r = parse_chunk("max-size", optarg, &o->max_size);
			break;
		case OPT_SWEEP:
			r = parse_count("sweep", optarg, 0, 64, &o->sweep);
			break;
		case OPT_PATTERN:
			o->seq = !strcmp(optarg, "seq") || !strcmp(optarg, "both");
			o->rand = !strcmp(optarg, "rand") || !strcmp(optarg, "both");
			if (!o->seq && !o->rand)
				return tool_usage_err(CMD, "--pattern '%s': expected seq, rand or both",
						      optarg);
			break;
		case 'r':
			r = parse_count("repeat", optarg, 1, 100, &o->repeat);
			break;
		case 't':
			if (tool_parse_value(CMD, "time", optarg, IOSIG_DIM_TIME,
					     "a time such as 0.3s", &v))
				return TOOL_EXIT_USAGE;
			if (!(v > 0) || v > 600)
				return tool_usage_err(CMD, "--time '%s': expected more than 0 and at "
						      "most 10 min", optarg);
			o->cell_time = v;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'p':
			o->plot = optarg;
			break;
		default:
			r = tool_probe_opt(CMD, c, argv, longopts, usage, &o->common);
			break;
		}
		if (r)
			return r;
	}
	if (o->min_size > o->max_size)
		return tool_usage_err(CMD, "--min-size is larger than --max-size");
	if (o->max_size > 1024 * MiB)
		return tool_usage_err(CMD, "--max-size: at most 1 GiB");
	return 0;
}

/* Short name of a mount for tables and plots: its last path component. */
static const char *label_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* Opens the mount's session and writes the random-access file once. */
static int prepare(struct vmount *vm, const struct opts *o, const void *buf)
{
	const struct prb_fsinfo *fi;
	struct prb_sync_stats st;
	uint64_t rng = 1;
	int r;

	r = prb_cli_session(vm->m, o->common.max_space, &vm->s, NULL, vm->why, sizeof(vm->why));
	if (r < 0)
		return r;
	fi = prb_session_info(vm->s);
	/* 60 % of the budget for the random file, 35 % for the appended one. */
	vm->rand_span = fi->budget / 100 * 60 / MiB * MiB;
	vm->seq_span = fi->budget / 100 * 35 / MiB * MiB;
	r = prb_session_file(vm->s, false, &vm->fd_seq);
	if (r == 0)
		r = prb_session_file(vm->s, false, &vm->fd_rand);
	if (r < 0) {
		snprintf(vm->why, sizeof(vm->why), "cannot create a test file: %s", strerror(-r));
		return r;
	}
	/* Untimed: the random overwrites need written data under them. */
	{
		struct prb_sync_job job = {
			.fd = vm->fd_rand, .buf = buf, .ds = MiB, .pattern = PRB_SEQ,
			.span = vm->rand_span, .min_ops = (unsigned)(vm->rand_span / MiB),
			.max_ops = (unsigned)(vm->rand_span / MiB), .cancel = &prb_cli_stop,
			.rng = &rng,
		};

		r = prb_sync_run(&job, &st);
	}
	if (r == 0 && fdatasync(vm->fd_rand) < 0)
		r = -errno;
	if (r < 0) {
		if (r != -ECANCELED)
			snprintf(vm->why, sizeof(vm->why), "cannot write its random-access file: %s",
				 strerror(-r));
		return r;
	}
	vm->ok = true;
	return 0;
}

static void release(struct vmount *vm)
{
	if (vm->fd_seq >= 0)
		close(vm->fd_seq);
	if (vm->fd_rand >= 0)
		close(vm->fd_rand);
	prb_session_close(vm->s);
	vm->s = NULL;
	vm->fd_seq = vm->fd_rand = -1;
}

/* Whether mount vm can take chunks of ds bytes in this pattern. */
static bool fits(const struct vmount *vm, uint64_t ds, bool random)
{
	return random ? vm->rand_span / ds >= 2 : vm->seq_span >= ds;
}

/*
 * One cell of one round: the mounts take turns, one synchronous write each,
 * until each did min_ops and the cell's time is up (or max_ops).
 */
static int run_cell(struct vmount *vm, size_t nm, struct vcase *cs, unsigned round,
		    const struct opts *o, const void *buf, uint64_t *rng)
{
	unsigned *ops = calloc(nm, sizeof(*ops));
	double end = prb_now() + o->cell_time;
	int r = 0;

	if (!ops)
		return -ENOMEM;
	for (unsigned turn = 0;; turn++) {
		bool any = false;

		for (size_t j = 0; j < nm; j++) {
			/* Rotate who goes first, so no mount always follows another. */
			size_t i = (j + turn) % nm;
			struct vcell *c = &cs->c[i];
			struct prb_sync_stats st;
			double t;
			struct prb_sync_job job = {
				.fd = cs->random ? vm[i].fd_rand : vm[i].fd_seq, .buf = buf,
				.ds = cs->ds, .pattern = cs->random ? PRB_RANDOM : PRB_APPEND,
				.span = cs->random ? vm[i].rand_span : vm[i].seq_span,
				.start = vm[i].append_pos, .fsync = true, .min_ops = 1, .max_ops = 1,
				.cancel = &prb_cli_stop, .rng = rng, .times = &t,
				/* A random cell starts with the file out of the page cache. */
				.drop_cache = cs->random && ops[i] == 0,
			};

			if (!vm[i].ok || c->skip || ops[i] >= o->max_ops ||
			    (ops[i] >= o->min_ops && prb_now() >= end))
				continue;
			if (!cs->random && ops[i] == 0)
				job.start = 0; /* a fresh file per cell, as dd writes one */
			r = prb_sync_run(&job, &st);
			if (r < 0) {
				if (r != -ECANCELED) {
					snprintf(vm[i].why, sizeof(vm[i].why),
						 "a %s write of %llu bytes failed: %s",
						 cs->random ? "random" : "sequential",
						 (unsigned long long)cs->ds, strerror(-r));
					vm[i].ok = false;
					vm[i].failed = true;
					r = 0;
					continue;
				}
				goto out_free;
			}
			vm[i].append_pos = cs->random ? vm[i].append_pos : st.next;
			r = prb_samples_push(&c->t, t);
			if (r < 0)
				goto out_free;
			ops[i]++;
			any = true;
		}
		if (!any)
			break;
	}
	for (size_t i = 0; i < nm; i++) {
		struct vcell *c = &cs->c[i];

		c->round_med[round] = ops[i] ? prb_quantile_of(c->t.v + c->t.n - ops[i], ops[i], 0.5)
					     : NAN;
	}
out_free:
	free(ops);
	return r;
}

/* Sizes to measure: powers of two in [min, max] and the linear sweep. */
static int make_sizes(const struct opts *o, uint64_t cs, uint64_t **ret, bool **ret_sweep,
		      size_t *ret_n)
{
	size_t cap = 64 + o->sweep, n = 0;
	uint64_t *v = calloc(cap, sizeof(*v));
	bool *sw = calloc(cap, sizeof(*sw));
	uint64_t step = cs / 4 ? cs / 4 : 1;

	if (!v || !sw) {
		free(v);
		free(sw);
		return -ENOMEM;
	}
	for (uint64_t p = 1; p <= o->max_size && p; p *= 2)
		if (p >= o->min_size)
			v[n++] = p;
	for (unsigned k = 1; k <= o->sweep; k++) {
		uint64_t ds = k * step;
		bool found = false;

		if (ds < o->min_size || ds > o->max_size)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (v[i] == ds) {
				sw[i] = found = true;
				break;
			}
		}
		if (!found) {
			sw[n] = true;
			v[n++] = ds;
		}
	}
	/* Insertion sort: a few dozen sizes. */
	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];
			bool b = sw[j];

			v[j] = v[j - 1];
			sw[j] = sw[j - 1];
			v[j - 1] = t;
			sw[j - 1] = b;
		}
	}
	*ret = v;
	*ret_sweep = sw;
	*ret_n = n;
	return 0;
}

static void finish_cell(struct vcell *c, uint64_t ds)
{
	double med, q25, q75, half;

	if (!c->t.n) {
		c->meas = c->lo = c->hi = c->ci_lo = c->ci_hi = NAN;
		return;
	}
	med = prb_quantile_of(c->t.v, c->t.n, 0.5);
	q25 = prb_quantile_of(c->t.v, c->t.n, 0.25);
	q75 = prb_quantile_of(c->t.v, c->t.n, 0.75);
	c->meas = (double)ds / med;
	c->lo = (double)ds / q75;
	c->hi = (double)ds / q25;
	/* McGill, Tukey and Larsen's notch: medians whose intervals
	 * med +- 1.58 IQR / sqrt(n) do not overlap differ at about 95 %. */
	half = 1.58 * (q75 - q25) / sqrt((double)c->t.n);
	c->ci_lo = (double)ds / (med + half);
	c->ci_hi = med - half > 0 ? (double)ds / (med - half) : INFINITY;
}

/* Decides a case over the mounts selected by `use`. */
static void decide(const struct vcase *cs, const struct vmount *vm, size_t nm, const bool *use,
		   int *ret_pick, int *ret_best, bool *ret_decisive, double *ret_ratio)
{
	int pick = -1, best = -1, second = -1;

	for (size_t i = 0; i < nm; i++) {
		const struct vcell *c = &cs->c[i];

		if (!use[i] || !vm[i].ok || c->skip || !(c->meas > 0))
			continue;
		if (pick < 0 || c->model > cs->c[pick].model)
			pick = (int)i;
		if (best < 0 || c->meas > cs->c[best].meas) {
			second = best;
			best = (int)i;
		} else if (second < 0 || c->meas > cs->c[second].meas) {
			second = (int)i;
		}
	}
	*ret_pick = pick;
	*ret_best = best;
	/* Decisive: the best one's median is above the runner-up's beyond
	 * their 95 % intervals, so repeating the measurement would not
	 * change which one is fastest. */
	*ret_decisive = best >= 0 && (second < 0 || cs->c[best].ci_lo > cs->c[second].ci_hi);
	*ret_ratio = pick >= 0 && best >= 0 ? cs->c[pick].meas / cs->c[best].meas : NAN;
}

/* How a pair of mounts compares in one case: -1 not measured, 0 within
 * the 95 % intervals, 1 clearly ordered and the model agrees, 2 clearly
 * ordered and the model disagrees. */
static int pair_verdict(const struct vcase *cs, const struct vmount *vm, size_t a, size_t b)
{
	const struct vcell *ca = &cs->c[a], *cb = &cs->c[b];

	if (!vm[a].ok || !vm[b].ok || ca->skip || cb->skip || !(ca->meas > 0) || !(cb->meas > 0))
		return -1;
	if (ca->ci_lo <= cb->ci_hi && cb->ci_lo <= ca->ci_hi)
		return 0;
	return (ca->model > cb->model) == (ca->meas > cb->meas) ? 1 : 2;
}

static void summarize(const struct vcase *cases, size_t nc, const struct vmount *vm, size_t nm,
		      bool persistent, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->worst = INFINITY;
	for (size_t k = 0; k < nc; k++) {
		const struct vcase *cs = &cases[k];
		int pick = persistent ? cs->pick_p : cs->pick;
		int best = persistent ? cs->best_p : cs->best;
		bool dec = persistent ? cs->decisive_p : cs->decisive;
		double ratio = persistent ? cs->ratio_p : cs->ratio;
		unsigned used = 0;

		for (size_t i = 0; i < nm; i++)
			used += vm[i].ok && !cs->c[i].skip && cs->c[i].meas > 0 &&
				(!persistent || !vm[i].m->volatile_);
		if (pick < 0 || best < 0 || used < 2)
			continue;
		s->cases++;
		s->hits += pick == best;
		s->decisive += dec;
		s->decisive_hits += dec && pick == best;
		s->below += ratio < TARGET_RATIO;
		if (ratio < s->worst)
			s->worst = ratio;
		for (size_t a = 0; a < nm; a++) {
			for (size_t b = a + 1; b < nm; b++) {
				int v = pair_verdict(cs, vm, a, b);

				if (v < 0 || (persistent && (vm[a].m->volatile_ ||
							     vm[b].m->volatile_)))
					continue;
				s->pairs++;
				s->pair_ties += v == 0;
				s->pair_agree += v == 1;
			}
		}
	}
}

/* Per pair of mounts: in how many cases the model orders them as measured,
 * and each case where it does not. */
static void print_pairs(const struct vcase *cases, size_t nc, const struct vmount *vm, size_t nm)
{
	printf("\nPairs (model order against measured order, per chunk size and pattern):\n");
	for (size_t a = 0; a < nm; a++) {
		for (size_t b = a + 1; b < nm; b++) {
			unsigned n[3] = { 0 };

			for (size_t k = 0; k < nc; k++) {
				int v = pair_verdict(&cases[k], vm, a, b);

				if (v >= 0)
					n[v]++;
			}
			printf("  %s vs %s: %u agree, %u disagree, %u within the spread\n", vm[a].label,
			       vm[b].label, n[1], n[2], n[0]);
			for (size_t k = 0; k < nc; k++) {
				const struct vcase *cs = &cases[k];
				char size[32];

				if (pair_verdict(cs, vm, a, b) != 2)
					continue;
				printf("    disagree at %s %s: measured %.4g / %.4g MiB/s, model %.4g / "
				       "%.4g\n", cs->random ? "rand" : "seq",
				       fmt_bytes((double)cs->ds, size, sizeof(size)),
				       cs->c[a].meas / MiB, cs->c[b].meas / MiB, cs->c[a].model / MiB,
				       cs->c[b].model / MiB);
			}
		}
	}
}

static void print_summary(FILE *fp, const char *what, const struct summary *s)
{
	if (!s->cases) {
		fprintf(fp, "%s: fewer than two mounts measured, nothing to rank\n", what);
		return;
	}
	fprintf(fp,
		"%s: model picks the measured-fastest mount in %u of %u cases (%.0f%%; target "
		">= %.0f%%) - %u of the %u where the fastest is clear (95 %% intervals of the "
		"medians apart);\n"
		"  its pick reaches %.0f%% of the fastest at worst (target >= %.0f%% in every "
		"case; %u cases below);\n"
		"  pairs: %u of %u clearly ordered pairs ordered as measured, %u more pairs "
		"within the measurement's 95 %% intervals\n",
		what, s->hits, s->cases, 100.0 * s->hits / s->cases, TARGET_HIT * 100,
		s->decisive_hits, s->decisive, s->worst * 100, TARGET_RATIO * 100, s->below,
		s->pair_agree, s->pairs - s->pair_ties, s->pair_ties);
}

static void print_table(const struct vcase *cases, size_t nc, const struct vmount *vm, size_t nm)
{
	size_t ncol = 3 + nm + 2;
	const char **hdr = calloc(ncol, sizeof(*hdr));
	const char **cells = calloc(ncol, sizeof(*cells));
	char (*txt)[48] = calloc(nm + 2, sizeof(*txt));
	struct tool_table *t;

	if (!hdr || !cells || !txt) {
		free(hdr);
		free(cells);
		free(txt);
		return;
	}
	hdr[0] = "PATTERN";
	hdr[1] = "SIZE";
	hdr[2] = "";
	for (size_t i = 0; i < nm; i++)
		hdr[3 + i] = vm[i].label;
	hdr[3 + nm] = "MODEL PICK";
	hdr[4 + nm] = "MEASURED BEST";
	t = tool_table_new((unsigned)ncol, hdr);
	for (size_t i = 1; i < 3 + nm; i++)
		tool_table_align_right(t, (unsigned)i);
	printf("Throughput in MiB/s, measured / model (Eq. 3); * marks the model's pick.\n");
	for (size_t k = 0; k < nc; k++) {
		const struct vcase *cs = &cases[k];
		char size[32];

		cells[0] = cs->random ? "rand" : "seq";
		cells[1] = fmt_bytes((double)cs->ds, size, sizeof(size));
		cells[2] = cs->sweep ? "sweep" : "";
		for (size_t i = 0; i < nm; i++) {
			const struct vcell *c = &cs->c[i];

			if (!vm[i].ok || c->skip || !(c->meas > 0))
				snprintf(txt[i], sizeof(txt[i]), "-");
			else
				snprintf(txt[i], sizeof(txt[i]), "%s%.4g / %.4g",
					 (int)i == cs->pick ? "*" : "", c->meas / MiB, c->model / MiB);
			cells[3 + i] = txt[i];
		}
		cells[3 + nm] = cs->pick >= 0 ? vm[cs->pick].label : "-";
		snprintf(txt[nm], sizeof(txt[nm]), "%s%s%s",
			 cs->best >= 0 ? vm[cs->best].label : "-",
			 cs->pick >= 0 && cs->pick == cs->best ? "" : " (miss)",
			 cs->decisive ? "" : " ~");
		cells[4 + nm] = txt[nm];
		tool_table_row(t, cells);
	}
	tool_table_print(t, stdout);
	printf("~ : the 95 %% intervals of the medians of the fastest and the runner-up "
	       "overlap.\n");
	tool_table_free(t);
	free(hdr);
	free(cells);
	free(txt);
}

/* Noise: median over cells of the per-write IQR / median, and of the
 * spread of the round medians (max / min - 1). */
static void noise(const struct vcase *cases, size_t nc, size_t nm, unsigned rounds,
		  double *ret_iqr, double *ret_rounds)
{
	struct prb_samples iqr = { 0 }, rs = { 0 };

	for (size_t k = 0; k < nc; k++) {
		for (size_t i = 0; i < nm; i++) {
			const struct vcell *c = &cases[k].c[i];
			double lo = INFINITY, hi = 0;

			if (c->t.n < 3 || !(c->meas > 0))
				continue;
			prb_samples_push(&iqr, (c->hi - c->lo) / c->meas);
			for (unsigned r = 0; r < rounds; r++) {
				if (isnan(c->round_med[r]))
					continue;
				lo = fmin(lo, c->round_med[r]);
				hi = fmax(hi, c->round_med[r]);
			}
			if (hi > 0 && isfinite(lo))
				prb_samples_push(&rs, hi / lo - 1);
		}
	}
	*ret_iqr = prb_quantile(iqr.v, iqr.n, 0.5);
	*ret_rounds = prb_quantile(rs.v, rs.n, 0.5);
	free(iqr.v);
	free(rs.v);
}

static void json_summary(struct json_writer *w, const char *key, const struct summary *s)
{
	json_obj_begin(w, key);
	json_uint(w, "cases", s->cases);
	json_uint(w, "hits", s->hits);
	json_num(w, "hit_rate", s->cases ? (double)s->hits / s->cases : NAN);
	json_uint(w, "decisive_cases", s->decisive);
	json_uint(w, "decisive_hits", s->decisive_hits);
	json_num(w, "worst_ratio", s->cases ? s->worst : NAN);
	json_uint(w, "cases_below_ratio", s->below);
	json_bool(w, "target_met", s->cases && (double)s->hits >= TARGET_HIT * s->cases &&
				   s->worst >= TARGET_RATIO);
	json_uint(w, "pairs", s->pairs);
	json_uint(w, "pairs_agree", s->pair_agree);
	json_uint(w, "pairs_within_spread", s->pair_ties);
	json_obj_end(w);
}

static int write_json(const char *file, const struct opts *o, const struct vcase *cases,
		      size_t nc, const struct vmount *vm, size_t nm, const struct summary *all,
		      const struct summary *pers, double iqr, double rspread)
{
	FILE *fp = strcmp(file, "-") ? fopen(file, "we") : stdout;
	struct json_writer w;
	int r;

	if (!fp)
		return -errno;
	json_init(&w, fp, true);
	json_obj_begin(&w, NULL);
	json_obj_begin(&w, "settings");
	json_uint(&w, "rounds", o->repeat);
	json_num(&w, "cell_time", o->cell_time);
	json_uint(&w, "min_ops", o->min_ops);
	json_uint(&w, "max_ops", o->max_ops);
	json_str(&w, "method", "write + fsync per chunk; seq = appends to a fresh file, "
			       "rand = overwrites at random chunk multiples of an uncached file");
	json_obj_end(&w);
	json_arr_begin(&w, "mounts");
	for (size_t i = 0; i < nm; i++) {
		const struct iosig_mount *m = vm[i].m;

		json_obj_begin(&w, NULL);
		json_str(&w, "path", m->path);
		json_str(&w, "label", vm[i].label);
		json_str(&w, "fstype", m->fstype);
		json_str(&w, "class", iosig_class_name((enum iosig_class)m->cls));
		json_bool(&w, "volatile", m->volatile_);
		json_bool(&w, "rotational", m->rotational);
		json_bool(&w, "measured", vm[i].ok);
		if (!vm[i].ok)
			json_str(&w, "error", vm[i].why);
		json_obj_begin(&w, "model_inputs");
		json_num(&w, "latency", m->latency);
		json_str(&w, "latency_source", iosig_source_name(m->src[IOSIG_F_LATENCY]));
		json_num(&w, "seek", m->seek);
		json_num(&w, "seq_write_bw", m->seq_write_bw);
		json_str(&w, "seq_write_bw_source", iosig_source_name(m->src[IOSIG_F_SEQ_WRITE_BW]));
		json_num(&w, "rand_write_bw", m->rand_write_bw);
		json_num(&w, "seq_read_bw", m->seq_read_bw);
		json_num(&w, "rand_read_bw", m->rand_read_bw);
		json_num(&w, "iops", m->iops);
		json_uint(&w, "block_size", m->block_size);
		json_str(&w, "block_size_source", iosig_source_name(m->src[IOSIG_F_BLOCK_SIZE]));
		json_obj_end(&w);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_arr_begin(&w, "cases");
	for (size_t k = 0; k < nc; k++) {
		const struct vcase *cs = &cases[k];

		json_obj_begin(&w, NULL);
		json_str(&w, "pattern", cs->random ? "rand" : "seq");
		json_uint(&w, "size", cs->ds);
		json_bool(&w, "sweep", cs->sweep);
		json_arr_begin(&w, "mounts");
		for (size_t i = 0; i < nm; i++) {
			const struct vcell *c = &cs->c[i];

			json_obj_begin(&w, NULL);
			json_str(&w, "label", vm[i].label);
			json_num(&w, "model", c->model);
			json_num(&w, "measured", c->meas);
			json_num(&w, "measured_p25", c->lo);
			json_num(&w, "measured_p75", c->hi);
			json_num(&w, "median_ci_low", c->ci_lo);
			json_num(&w, "median_ci_high", c->ci_hi);
			json_uint(&w, "writes", c->t.n);
			json_arr_begin(&w, "round_medians");
			for (unsigned r2 = 0; r2 < o->repeat; r2++)
				json_num(&w, NULL, isnan(c->round_med[r2]) ? NAN :
					 (double)cs->ds / c->round_med[r2]);
			json_arr_end(&w);
			json_obj_end(&w);
		}
		json_arr_end(&w);
		json_arr_begin(&w, "pairs");
		for (size_t a = 0; a < nm; a++) {
			for (size_t b = a + 1; b < nm; b++) {
				static const char *const verdict[] = { "within_spread", "agree",
								      "disagree" };
				int v = pair_verdict(cs, vm, a, b);

				if (v < 0)
					continue;
				json_obj_begin(&w, NULL);
				json_str(&w, "a", vm[a].label);
				json_str(&w, "b", vm[b].label);
				json_str(&w, "model_faster", cs->c[a].model > cs->c[b].model ?
							     vm[a].label : vm[b].label);
				json_str(&w, "measured_faster", cs->c[a].meas > cs->c[b].meas ?
								vm[a].label : vm[b].label);
				json_str(&w, "verdict", verdict[v]);
				json_obj_end(&w);
			}
		}
		json_arr_end(&w);
		json_str(&w, "model_pick", cs->pick >= 0 ? vm[cs->pick].label : NULL);
		json_str(&w, "measured_best", cs->best >= 0 ? vm[cs->best].label : NULL);
		json_bool(&w, "decisive", cs->decisive);
		json_num(&w, "ratio", cs->ratio);
		json_str(&w, "model_pick_persistent", cs->pick_p >= 0 ? vm[cs->pick_p].label : NULL);
		json_str(&w, "measured_best_persistent",
			 cs->best_p >= 0 ? vm[cs->best_p].label : NULL);
		json_num(&w, "ratio_persistent", cs->ratio_p);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_summary(&w, "summary", all);
	json_summary(&w, "summary_persistent", pers);
	json_obj_begin(&w, "noise");
	json_num(&w, "write_iqr_over_median", iqr);
	json_num(&w, "round_spread", rspread);
	json_obj_end(&w);
	json_obj_end(&w);
	r = json_finish(&w);
	if (fp != stdout && fclose(fp) != 0 && r == 0)
		r = -errno;
	return r;
}

/* ---- the plot ---------------------------------------------------------- */

/* Writes one data file per mount and panel: size, measured, p25, p75, model. */
static int plot_data(const char *dir, const struct vcase *cases, size_t nc, size_t nm,
		     size_t mount, bool random, bool sweep)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/m%zu-%s-%s.dat", dir, mount, random ? "rand" : "seq",
		 sweep ? "sweep" : "pow");
	fp = fopen(path, "we");
	if (!fp)
		return -errno;
	for (size_t k = 0; k < nc; k++) {
		const struct vcase *cs = &cases[k];
		const struct vcell *c = &cs->c[mount];
		bool pow2 = (cs->ds & (cs->ds - 1)) == 0;

		(void)nm;
		if (cs->random != random || (sweep ? !cs->sweep : !pow2) || !(c->meas > 0))
			continue;
		fprintf(fp, "%.17g %.17g %.17g %.17g %.17g\n",
			sweep ? (double)cs->ds / 1024 : (double)cs->ds, c->meas / MiB, c->lo / MiB,
			c->hi / MiB, c->model / MiB);
	}
	return fclose(fp) ? -errno : 0;
}

static void plot_panel(FILE *sp, const char *dir, const struct vmount *vm, size_t nm,
		       bool random, bool sweep, char tag)
{
	fprintf(sp, "set title '(%c) %s writes + fsync, %s chunk sizes'\n", tag,
		random ? "random" : "sequential", sweep ? "linear" : "doubling");
	if (sweep) {
		fprintf(sp, "unset logscale x\nset xlabel 'chunk size (KiB)'\nset format x '%%g'\n");
	} else {
		fprintf(sp, "set logscale x 2\nset xlabel 'chunk size (bytes)'\n"
			    "set format x '2^{%%L}'\n");
	}
	fprintf(sp, "plot ");
	for (size_t i = 0; i < nm; i++) {
		if (!vm[i].ok)
			continue;
		fprintf(sp, "%s'%s/m%zu-%s-%s.dat' using 1:2:3:4 with yerrorbars lc %zu pt 7 ps 0.6 "
			    "title '%s measured', '' using 1:5 with lines lc %zu dt 2 title '%s model'",
			i ? ", " : "", dir, i, random ? "rand" : "seq", sweep ? "sweep" : "pow",
			i + 1, vm[i].label, i + 1, vm[i].label);
	}
	fprintf(sp, "\n");
}

static int spawn_wait(char *const argv[])
{
	pid_t pid;
	int st, r;

	r = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (r)
		return -r;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* Draws the four panels (sequential, random; doubling, linear sizes) with
 * gnuplot into `file`.  Data and script live in a private temporary
 * directory removed afterwards. */
static int plot(const char *file, const struct vcase *cases, size_t nc, const struct vmount *vm,
		size_t nm, bool have_sweep, struct iosig_error *err)
{
	char dir[] = "/tmp/iosig-validate-XXXXXX", script[PATH_MAX], out[PATH_MAX];
	char *argv[] = { "gnuplot", script, NULL };
	FILE *sp;
	int r = 0;

	memset(err, 0, sizeof(*err));
	if (!realpath(".", out) || (file[0] != '/' && strlen(out) + strlen(file) + 2 > sizeof(out)))
		return -ENAMETOOLONG;
	if (file[0] == '/')
		snprintf(out, sizeof(out), "%s", file);
	else
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "/%s", file);
	if (!mkdtemp(dir))
		return -errno;
	for (size_t i = 0; i < nm && r == 0; i++) {
		for (int p = 0; p < 4 && r == 0; p++)
			r = plot_data(dir, cases, nc, nm, i, p & 1, p & 2);
	}
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	sp = r == 0 ? fopen(script, "we") : NULL;
	if (!sp) {
		r = r ? r : -errno;
		goto out_rm;
	}
	fprintf(sp, "set terminal pngcairo size 1600,%d font ',10'\n", have_sweep ? 1200 : 600);
	fprintf(sp, "set output '%s'\n", out);
	fprintf(sp, "set multiplot layout %d,2 title 'IOSIG Eq. 3 (dashed) vs measured (points, "
		    "IQR bars): synchronous chunked writes'\n", have_sweep ? 2 : 1);
	fprintf(sp, "set logscale y\nset ylabel 'throughput (MiB/s)'\nset grid\n"
		    "set key left top font ',8'\n");
	plot_panel(sp, dir, vm, nm, false, false, 'a');
	plot_panel(sp, dir, vm, nm, true, false, 'b');
	if (have_sweep) {
		plot_panel(sp, dir, vm, nm, false, true, 'c');
		plot_panel(sp, dir, vm, nm, true, true, 'd');
	}
	fprintf(sp, "unset multiplot\n");
	if (fclose(sp) != 0) {
		r = -errno;
		goto out_rm;
	}
	r = spawn_wait(argv);
	if (r == -ENOENT)
		snprintf(err->msg, sizeof(err->msg),
			 "gnuplot not found: install gnuplot-nox (scripts/install-deps)");
	else if (r < 0)
		snprintf(err->msg, sizeof(err->msg), "gnuplot failed (is the directory of the "
			 "PNG writable?)");
out_rm:
	for (size_t i = 0; i < nm; i++) {
		for (int p = 0; p < 4; p++) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/m%zu-%s-%s.dat", dir, i, p & 1 ? "rand" : "seq",
				 p & 2 ? "sweep" : "pow");
			unlink(path);
		}
	}
	unlink(script);
	rmdir(dir);
	return r;
}

/* ---- main -------------------------------------------------------------- */

/* What one run of `iosig validate` works on. */
struct vrun {
	struct opts o;
	struct vmount *vm;     /* the mounts under test, nm of them */
	size_t nm;
	struct vcase *cases;   /* nc cases, each with a cell per mount */
	size_t nc;
	bool *all_use;         /* the mounts the "all" summary compares */
	bool *pers_use;        /* ... and the "persistent" one */
	bool have_sweep;       /* some case is part of the linear sweep */
	void *buf;             /* the data written */
	bool bar;              /* a progress bar on stderr */
};

/*
 * Prepares every selected mount (session, test files).  Returns how many
 * can be measured, or -ECANCELED when interrupted.  A mount that fails is
 * reported and sets *rc to TOOL_EXIT_FAIL; *ret_cs is raised to the
 * largest block size of the others.
 */
static int prepare_mounts(struct vrun *v, const struct iosig_mount **sel, uint64_t *ret_cs,
			  int *rc)
{
	int ok = 0;

	for (size_t i = 0; i < v->nm; i++) {
		char label[PATH_MAX + 32];
		int r;

		v->vm[i].m = sel[i];
		v->vm[i].label = label_of(sel[i]->path);
		v->all_use[i] = true;
		v->pers_use[i] = !sel[i]->volatile_;
		snprintf(label, sizeof(label), "preparing %s", sel[i]->path);
		tool_probe_bar(v->bar, 0, label);
		r = prepare(&v->vm[i], &v->o, v->buf);
		if (r == -ECANCELED || prb_cli_stop)
			return -ECANCELED;
		if (r < 0) {
			tool_probe_bar_clear(v->bar);
			tool_err(CMD, "%s: %s", sel[i]->path, v->vm[i].why);
			*rc = TOOL_EXIT_FAIL;
			continue;
		}
		ok++;
		if (sel[i]->block_size > *ret_cs)
			*ret_cs = sel[i]->block_size;
	}
	return ok;
}

/* The cases: each of the ns chunk sizes with each pattern asked for, and
 * in each a cell per mount with the model's prediction.  0 or -ENOMEM
 * (v->nc counts what was allocated, for the cleanup). */
static int make_cases(struct vrun *v, const uint64_t *sizes, const bool *sweep, size_t ns)
{
	v->cases = calloc(2 * ns, sizeof(*v->cases));
	if (!v->cases)
		return -ENOMEM;
	for (size_t k = 0; k < ns; k++) {
		for (int p = 0; p < 2; p++) {
			struct vcase *cs;

			if ((p == 0 && !v->o.seq) || (p == 1 && !v->o.rand))
				continue;
			cs = &v->cases[v->nc++];
			cs->ds = sizes[k];
			cs->random = p;
			cs->sweep = sweep[k];
			v->have_sweep |= sweep[k];
			cs->c = calloc(v->nm, sizeof(*cs->c));
			if (!cs->c)
				return -ENOMEM;
			for (size_t i = 0; i < v->nm; i++) {
				struct vmount *vm = &v->vm[i];

				cs->c[i].round_med = calloc(v->o.repeat, sizeof(double));
				if (!cs->c[i].round_med)
					return -ENOMEM;
				cs->c[i].skip = vm->ok && !fits(vm, cs->ds, cs->random);
				cs->c[i].model = iosig_throughput(vm->m, cs->ds, cs->random,
								  IOSIG_OP_WRITE);
			}
		}
	}
	return 0;
}

/* Every case in every round, the cells of a case side by side.  0,
 * -ECANCELED when interrupted, or the -errno of a failed measurement. */
static int measure(struct vrun *v)
{
	size_t done = 0, total = v->nc * v->o.repeat;
	uint64_t rng = 0x5eed;

	for (unsigned round = 0; round < v->o.repeat; round++) {
		for (size_t k = 0; k < v->nc; k++) {
			const struct vcase *cs = &v->cases[k];
			int r;

			if (v->bar) {
				char label[128], size[32];

				snprintf(label, sizeof(label), "round %u/%u  %s %s", round + 1,
					 v->o.repeat, cs->random ? "rand" : "seq",
					 fmt_bytes((double)cs->ds, size, sizeof(size)));
				tool_probe_bar(v->bar, (double)done / (double)total, label);
			}
			r = run_cell(v->vm, v->nm, &v->cases[k], round, &v->o, v->buf, &rng);
			if (r == -ECANCELED || prb_cli_stop)
				return -ECANCELED;
			if (r < 0)
				return r;
			done++;
		}
	}
	return 0;
}

/* What the model chose against what was measured: the decisions, the
 * table and summaries, the JSON file and the plot.  Returns rc, or
 * TOOL_EXIT_FAIL when a file cannot be written. */
static int report(struct vrun *v, int rc)
{
	struct summary s_all, s_pers;
	struct iosig_error err = { 0 };
	double iqr, rspread;
	int r;

	for (size_t k = 0; k < v->nc; k++) {
		struct vcase *cs = &v->cases[k];

		for (size_t i = 0; i < v->nm; i++)
			finish_cell(&cs->c[i], cs->ds);
		decide(cs, v->vm, v->nm, v->all_use, &cs->pick, &cs->best, &cs->decisive,
		       &cs->ratio);
		decide(cs, v->vm, v->nm, v->pers_use, &cs->pick_p, &cs->best_p, &cs->decisive_p,
		       &cs->ratio_p);
	}
	summarize(v->cases, v->nc, v->vm, v->nm, false, &s_all);
	summarize(v->cases, v->nc, v->vm, v->nm, true, &s_pers);
	noise(v->cases, v->nc, v->nm, v->o.repeat, &iqr, &rspread);
	if (!v->o.common.quiet) {
		print_table(v->cases, v->nc, v->vm, v->nm);
		printf("\n");
		print_summary(stdout, "All mounts", &s_all);
		print_summary(stdout, "Persistent mounts", &s_pers);
		print_pairs(v->cases, v->nc, v->vm, v->nm);
		printf("Noise: one write's interquartile range is %.0f%% of its median; round "
		       "medians differ by %.0f%% (medians over cells).\n", iqr * 100, rspread * 100);
	}
	if (v->o.json) {
		r = write_json(v->o.json, &v->o, v->cases, v->nc, v->vm, v->nm, &s_all, &s_pers, iqr,
			       rspread);
		if (r < 0) {
			tool_err(CMD, "cannot write %s: %s", v->o.json, strerror(-r));
			rc = TOOL_EXIT_FAIL;
		}
	}
	if (v->o.plot) {
		r = plot(v->o.plot, v->cases, v->nc, v->vm, v->nm, v->have_sweep, &err);
		if (r < 0) {
			tool_err(CMD, "cannot draw %s: %s", v->o.plot,
				 err.msg[0] ? err.msg : strerror(-r));
			rc = TOOL_EXIT_FAIL;
		}
	}
	return rc;
}

static int run(int argc, char **argv)
{
	struct iosig_catalog *cat = NULL;
	const struct iosig_mount **sel = NULL;
	struct vrun v = { 0 };
	uint64_t *sizes = NULL, cs_max = 0;
	bool *sweep = NULL;
	size_t ns = 0;
	int r, rc = TOOL_EXIT_OK;

	r = parse_opts(argc, argv, &v.o);
	if (r)
		return r < 0 ? TOOL_EXIT_OK : r;
	r = tool_probe_mounts(CMD, argc - optind, argv + optind, &cat, &sel, &v.nm);
	if (r)
		return r;
	v.vm = calloc(v.nm ? v.nm : 1, sizeof(*v.vm));
	for (size_t i = 0; v.vm && i < v.nm; i++)
		v.vm[i].fd_seq = v.vm[i].fd_rand = -1;
	v.all_use = calloc(v.nm ? v.nm : 1, sizeof(*v.all_use));
	v.pers_use = calloc(v.nm ? v.nm : 1, sizeof(*v.pers_use));
	v.buf = prb_buffer(v.o.max_size > MiB ? v.o.max_size : MiB, 77);
	if (!v.vm || !v.all_use || !v.pers_use || !v.buf)
		goto out_oom;
	prb_cli_signals();
	v.bar = !v.o.common.quiet && isatty(STDERR_FILENO);
	r = prepare_mounts(&v, sel, &cs_max, &rc);
	if (r == -ECANCELED)
		goto out_interrupted;
	if (r == 0) {
		tool_err(CMD, "no mount could be measured");
		rc = TOOL_EXIT_FAIL;
		goto out_free;
	}
	if (cs_max < (uint64_t)sysconf(_SC_PAGESIZE))
		cs_max = (uint64_t)sysconf(_SC_PAGESIZE);
	if (make_sizes(&v.o, cs_max, &sizes, &sweep, &ns) < 0 ||
	    make_cases(&v, sizes, sweep, ns) < 0)
		goto out_oom;
	for (size_t i = 0; i < v.nm; i++) {
		if (v.vm[i].ok && v.cases[v.nc - 1].c[i].skip)
			tool_err(CMD, "%s: its space budget is too small for the largest chunks; "
				 "they are left out for this mount (see --max-space)", v.vm[i].m->path);
	}

	r = measure(&v);
	if (r == -ECANCELED)
		goto out_interrupted;
	if (r < 0) {
		tool_err(CMD, "%s", strerror(-r));
		rc = TOOL_EXIT_FAIL;
		goto out_free;
	}
	tool_probe_bar_clear(v.bar);
	for (size_t i = 0; i < v.nm; i++) {
		if (v.vm[i].failed) {
			tool_err(CMD, "%s: %s", v.vm[i].m->path, v.vm[i].why);
			rc = TOOL_EXIT_FAIL;
		}
		release(&v.vm[i]);
	}
	rc = report(&v, rc);
	goto out_free;

out_oom:
	tool_err(CMD, "out of memory");
	rc = TOOL_EXIT_FAIL;
	goto out_free;
out_interrupted:
	tool_probe_bar_clear(v.bar);
	tool_err(CMD, "interrupted by signal %d; test files removed", (int)prb_cli_stop);
	rc = 128 + prb_cli_stop;
out_free:
	for (size_t i = 0; v.vm && i < v.nm; i++)
		release(&v.vm[i]);
	prb_cli_active(NULL);
	for (size_t k = 0; v.cases && k < v.nc; k++) {
		for (size_t i = 0; v.cases[k].c && i < v.nm; i++) {
			free(v.cases[k].c[i].t.v);
			free(v.cases[k].c[i].round_med);
		}
		free(v.cases[k].c);
	}
	free(v.cases);
	free(sizes);
	free(sweep);
	free(v.buf);
	free(v.all_use);
	free(v.pers_use);
	free(v.vm);
	free(sel);
	iosig_catalog_free(cat);
	return rc;
}

const struct tool_cmd cmd_validate = {
	.name = "validate",
	.summary = "check the throughput model (Eq. 3) against measured chunked writes",
	.run = run,
};
