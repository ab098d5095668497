/* SPDX-License-Identifier: MIT */
/*
 * cmd_mttdl.c - `iosig mttdl`: the reliability models from the command line.
 * UBER (Eq. 1), MTTDL (Eq. 2) of a layout, the exact mean of the Markov chain
 * Eq. 2 approximates, P(loss) within a lifetime and, with --simulate, the
 * Monte Carlo estimate (the paper's Fig. 12).  docs/models.md derives it all.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "model.h"
#include "tool.h"

#define CMD "mttdl"

/* Most lifetimes one run may simulate (~1 s per 1e7 on one core). */
#define MAX_TRIALS 10000000000ull
/* Eq. 2 and the exact chain differing by more than this gets a note. */
#define EQ2_NOTE_REL 0.05

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: iosig mttdl [--layout NAME] [--disks N | --copies K | --data N --parity M]\n"
		"                   [--mttf TIME] [--mttr TIME] [--ber P --ecc E --sector-bits N | --uber U]\n"
		"                   [--size SIZE] [--lifetime TIME] [--simulate N [--seed S]] [--json]\n"
		"\n"
		"Mean time to data loss of a file on a redundant layout (IOSIG Eq. 1 and 2), the\n"
		"exact mean of the Markov chain Eq. 2 approximates, the probability of losing the\n"
		"file within a lifetime and, with --simulate, a Monte Carlo estimate.\n"
		"\n"
		"Layout:\n"
		"  --layout NAME       single, raid0, raid1, raid10, raid5, raid6, replication,\n"
		"                      erasure (default single)\n"
		"  --disks N           devices: raid0/raid5/raid6/raid10 need it (raid10: even),\n"
		"                      raid1 defaults to 2\n"
		"  --copies K          replication: K copies, survives K-1 failures\n"
		"  --data N --parity M erasure: N data + M parity devices, survives M failures\n"
		"Devices (defaults: the IOSIG paper's Sect. 7.4):\n"
		"  --mttf TIME         mean time to failure of one device (default 10y)\n"
		"  --mttr TIME         mean time to repair, i.e. to rebuild a device (default 1d)\n"
		"  --ber P             raw bit error rate (default 1e-6)\n"
		"  --ecc E             bit errors the ECC corrects per sector (default 2)\n"
		"  --sector-bits N     ECC sector size in bits (default 512)\n"
		"  --uber U            uncorrectable bit error rate, instead of the three above\n"
		"Data:\n"
		"  --size SIZE         size of the file (default 1GiB)\n"
		"  --lifetime TIME     lifetime for P(loss) (default 1d, as selection assumes\n"
		"                      for a job that declares none)\n"
		"Simulation:\n"
		"  --simulate N        also simulate N lifetimes (Monte Carlo)\n"
		"  --seed S            seed of the simulation (default 1); same seed, same result\n"
		"Output:\n"
		"  --json              one JSON object instead of the table\n"
		"  -h, --help          this text\n"
		"\n"
		"TIME takes units ms, s, min, h, d, w, mo (30 d), y (365 d): 10y, 36h, \"1.5*d\".\n"
		"SIZE takes B, KiB, MiB, GiB, TiB (K, M, G, T are the same powers of 1024).\n"
		"P and U are fractions (1e-6) or take ppm.  Exit status: 0 ok, 1 the simulation\n"
		"failed, 2 bad arguments.  See iosig-mttdl(1) and docs/models.md.\n");
}

/* The options, in the order of the option table. */
enum opt_id {
	O_LAYOUT, O_DISKS, O_COPIES, O_DATA, O_PARITY, O_MTTF, O_MTTR, O_BER, O_ECC,
	O_SECTOR_BITS, O_UBER, O_SIZE, O_LIFETIME, O_SIMULATE, O_SEED, O_JSON, O_HELP, O_COUNT
};

/* Everything the command line says. */
struct mttdl_args {
	enum iosig_layout_kind kind;
	const char *layout_name;   /* as typed, for messages */
	unsigned long long disks, copies, data, parity, ecc, sector_bits;
	unsigned long long trials; /* 0: no simulation */
	unsigned long long seed;
	double mttf, mttr;         /* seconds */
	double ber, uber;
	double size;               /* bytes */
	double lifetime;           /* seconds */
	bool json;
	bool given[O_COUNT];       /* the option was on the command line */
};

/* Which values an option with units accepts. */
enum range {
	RANGE_POSITIVE,    /* > 0 */
	RANGE_NONNEGATIVE, /* >= 0 */
	RANGE_FRACTION,    /* 0 to 1 */
};

enum opt_type {
	T_LAYOUT, /* a layout name into `kind` */
	T_UINT,   /* unsigned long long in [min, max] */
	T_VALUE,  /* double with units of dimension `dim`, in `range` */
	T_FLAG,   /* bool, no argument */
	T_HELP,   /* prints the usage */
};

/* One option: how to parse it and where its value goes (fio's fio_option). */
struct opt_desc {
	const char *name;           /* --name */
	enum opt_type type;
	size_t offset;              /* of the value in struct mttdl_args */
	unsigned long long min, max;/* T_UINT */
	int base;                   /* T_UINT: strtoull() base */
	enum iosig_dim dim;         /* T_VALUE */
	enum range range;           /* T_VALUE */
};

#define ARG(field) offsetof(struct mttdl_args, field)

static const struct opt_desc opts[O_COUNT] = {
	[O_LAYOUT] = { "layout", T_LAYOUT, ARG(kind) },
	[O_DISKS] = { "disks", T_UINT, ARG(disks), 1, UINT16_MAX, 10 },
	[O_COPIES] = { "copies", T_UINT, ARG(copies), 1, UINT16_MAX, 10 },
	[O_DATA] = { "data", T_UINT, ARG(data), 1, UINT16_MAX, 10 },
	[O_PARITY] = { "parity", T_UINT, ARG(parity), 0, UINT16_MAX - 1, 10 },
	[O_MTTF] = { "mttf", T_VALUE, ARG(mttf), .dim = IOSIG_DIM_TIME, .range = RANGE_POSITIVE },
	[O_MTTR] = { "mttr", T_VALUE, ARG(mttr), .dim = IOSIG_DIM_TIME, .range = RANGE_POSITIVE },
	[O_BER] = { "ber", T_VALUE, ARG(ber), .dim = IOSIG_DIM_FRACTION, .range = RANGE_FRACTION },
	[O_ECC] = { "ecc", T_UINT, ARG(ecc), 0, UINT32_MAX, 10 },
	[O_SECTOR_BITS] = { "sector-bits", T_UINT, ARG(sector_bits), 1, UINT32_MAX, 10 },
	[O_UBER] = { "uber", T_VALUE, ARG(uber), .dim = IOSIG_DIM_FRACTION,
		     .range = RANGE_FRACTION },
	[O_SIZE] = { "size", T_VALUE, ARG(size), .dim = IOSIG_DIM_SIZE,
		     .range = RANGE_NONNEGATIVE },
	[O_LIFETIME] = { "lifetime", T_VALUE, ARG(lifetime), .dim = IOSIG_DIM_TIME,
			 .range = RANGE_NONNEGATIVE },
	[O_SIMULATE] = { "simulate", T_UINT, ARG(trials), 1, MAX_TRIALS, 10 },
	[O_SEED] = { "seed", T_UINT, ARG(seed), 0, UINT64_MAX, 0 },
	[O_JSON] = { "json", T_FLAG, ARG(json) },
	[O_HELP] = { "help", T_HELP },
};

/* getopt_long() returns OPT_VAL_BASE + enum opt_id for a long option. */
#define OPT_VAL_BASE 256

/* A time, size or fraction with optional units (iosig_parse_value()). */
static int parse_dim(const struct opt_desc *o, const char *s, double *ret)
{
	static const char *const what[] = {
		[IOSIG_DIM_TIME] = "a time such as 10y, 36h or 1.5d",
		[IOSIG_DIM_SIZE] = "a size such as 1TiB or 512MiB",
		[IOSIG_DIM_FRACTION] = "a fraction such as 1e-6 or 10ppm",
	};
	static const char *const must[] = {
		[RANGE_POSITIVE] = "greater than 0",
		[RANGE_NONNEGATIVE] = "0 or more",
		[RANGE_FRACTION] = "from 0 to 1",
	};
	double v;

	if (o->dim == IOSIG_DIM_SIZE) /* 0 to 2^63 bytes, as totalsize */
		return tool_parse_size(CMD, o->name, s, o->range == RANGE_POSITIVE, ret);
	if (tool_parse_value(CMD, o->name, s, o->dim, what[o->dim], &v))
		return TOOL_EXIT_USAGE;
	if ((o->range == RANGE_POSITIVE && !(v > 0)) || !(v >= 0) ||
	    (o->range == RANGE_FRACTION && v > 1))
		return tool_usage_err(CMD, "--%s '%s' must be %s", o->name, s, must[o->range]);
	*ret = v;
	return 0;
}

static int parse_layout(const char *s, enum iosig_layout_kind *ret)
{
	for (unsigned k = IOSIG_LAYOUT_SINGLE; k <= IOSIG_LAYOUT_ERASURE; k++) {
		if (!strcmp(s, iosig_layout_name((enum iosig_layout_kind)k))) {
			*ret = (enum iosig_layout_kind)k;
			return 0;
		}
	}
	return tool_usage_err(CMD,
			      "unknown layout '%s': use single, raid0, raid1, raid10, raid5, "
			      "raid6, replication or erasure",
			      s);
}

/* Parses argv into *a.  Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct mttdl_args *a)
{
	struct option longopts[O_COUNT + 1] = { { 0 } };
	int c;

	*a = (struct mttdl_args){
		.kind = IOSIG_LAYOUT_SINGLE, .layout_name = "single",
		.mttf = 10 * 365 * 86400.0, .mttr = 86400, .ber = 1e-6, .ecc = 2,
		.sector_bits = 512, .size = 1073741824.0, .lifetime = 86400, .seed = 1,
	};
	for (unsigned i = 0; i < O_COUNT; i++)
		longopts[i] = (struct option){ opts[i].name,
					       opts[i].type == T_FLAG || opts[i].type == T_HELP ?
						       no_argument : required_argument,
					       NULL, OPT_VAL_BASE + (int)i };
	optind = 0; /* full re-initialisation of GNU getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const struct opt_desc *o;
		char *field;
		int r = 0;

		if (c == 'h')
			c = OPT_VAL_BASE + O_HELP;
		if (c < OPT_VAL_BASE || c >= OPT_VAL_BASE + O_COUNT)
			return tool_option_err(CMD, c, argv, longopts);
		o = &opts[c - OPT_VAL_BASE];
		field = (char *)a + o->offset;
		switch (o->type) {
		case T_LAYOUT:
			a->layout_name = optarg;
			r = parse_layout(optarg, &a->kind);
			break;
		case T_UINT:
			r = tool_parse_uint(CMD, o->name, optarg, o->min, o->max, o->base,
					    (unsigned long long *)(void *)field);
			break;
		case T_VALUE:
			r = parse_dim(o, optarg, (double *)(void *)field);
			break;
		case T_FLAG:
			*(bool *)(void *)field = true;
			break;
		case T_HELP:
			usage(stdout);
			return TOOL_EXIT_OK;
		}
		if (r)
			return r;
		a->given[c - OPT_VAL_BASE] = true;
	}
	if (optind < argc)
		return tool_usage_err(CMD, "unexpected argument '%s': every value belongs to an option",
				      argv[optind]);
	return -1;
}

/* Checks how the options fit together and builds the layout. */
static int build_layout(const struct mttdl_args *a, struct iosig_layout *ret)
{
	struct iosig_layout l = { .kind = (uint8_t)a->kind };
	const char *name = a->layout_name;
	unsigned long long d = a->disks;

	if (a->given[O_COPIES] && a->kind != IOSIG_LAYOUT_REPLICATION)
		return tool_usage_err(CMD, "--copies is for --layout replication, not %s", name);
	if ((a->given[O_DATA] || a->given[O_PARITY]) && a->kind != IOSIG_LAYOUT_ERASURE)
		return tool_usage_err(CMD, "--data and --parity are for --layout erasure, not %s",
				      name);
	if (a->given[O_UBER] && (a->given[O_BER] || a->given[O_ECC] || a->given[O_SECTOR_BITS]))
		return tool_usage_err(CMD, "--uber replaces --ber, --ecc and --sector-bits: give "
					   "either --uber or those");
	if (a->given[O_SEED] && !a->trials)
		return tool_usage_err(CMD, "--seed only matters with --simulate N");

	switch (a->kind) {
	case IOSIG_LAYOUT_SINGLE:
		if (a->given[O_DISKS] && d != 1)
			return tool_usage_err(CMD, "--layout single has one disk, not %llu: use "
						   "raid0 for striping over several",
					      d);
		d = 1;
		break;
	case IOSIG_LAYOUT_RAID1:
		if (!a->given[O_DISKS])
			d = 2;
		break;
	case IOSIG_LAYOUT_RAID0:
	case IOSIG_LAYOUT_RAID5:
	case IOSIG_LAYOUT_RAID6:
	case IOSIG_LAYOUT_RAID10: {
		static const unsigned long long min[] = { [IOSIG_LAYOUT_RAID0] = 1,
						     [IOSIG_LAYOUT_RAID5] = 2,
						     [IOSIG_LAYOUT_RAID6] = 3,
						     [IOSIG_LAYOUT_RAID10] = 2 };

		if (!a->given[O_DISKS])
			return tool_usage_err(CMD, "--layout %s needs --disks N", name);
		if (d < min[a->kind])
			return tool_usage_err(CMD, "--layout %s needs at least %llu disks, not %llu",
					      name, min[a->kind], d);
		if (a->kind == IOSIG_LAYOUT_RAID10 && d % 2)
			return tool_usage_err(CMD, "--layout raid10 needs an even number of disks "
						   "(mirrored pairs), not %llu",
					      d);
		break;
	}
	case IOSIG_LAYOUT_REPLICATION:
		if (!a->given[O_COPIES] && !a->given[O_DISKS])
			return tool_usage_err(CMD, "--layout replication needs --copies K");
		if (a->given[O_COPIES] && a->given[O_DISKS] && a->copies != d)
			return tool_usage_err(CMD, "--copies %llu and --disks %llu disagree: give "
						   "--copies only",
					      a->copies, d);
		if (a->given[O_COPIES])
			d = a->copies;
		break;
	case IOSIG_LAYOUT_ERASURE:
		if (!a->given[O_DATA] || !a->given[O_PARITY])
			return tool_usage_err(CMD, "--layout erasure needs --data N and --parity M");
		if (a->data + a->parity > UINT16_MAX)
			return tool_usage_err(CMD, "--data %llu + --parity %llu is more than %u devices",
					      a->data, a->parity, UINT16_MAX);
		if (a->given[O_DISKS] && d != a->data + a->parity)
			return tool_usage_err(CMD, "--disks %llu is not --data %llu + --parity %llu",
					      d, a->data, a->parity);
		d = a->data + a->parity;
		l.tolerated = (uint16_t)a->parity;
		break;
	}
	l.disks = (uint16_t)d;
	*ret = l;
	return 0;
}

/* "3.3 %" for probabilities worth a percentage, "2.7e-13" below. */
static char *fmt_prob(double p, char *buf, size_t size)
{
	if (isnan(p))
		snprintf(buf, size, "n/a");
	else if (p >= 1e-3)
		snprintf(buf, size, "%.3g %%", p * 100);
	else
		snprintf(buf, size, "%.3g", p);
	return buf;
}

/* What was computed, for both output forms. */
struct mttdl_out {
	struct iosig_layout layout;
	struct mdl_shape shape;
	double uber, h, mttdl, chain, p_loss;
	struct iosig_mc_result mc;
	bool simulated;
};

static const char *plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void print_table(const struct mttdl_args *a, const struct mttdl_out *o)
{
	static const char *const hdr[] = { "quantity", "value", "detail" };
	struct tool_table *t = tool_table_new(3, hdr);
	char v[64], d[192], x[64], y[64];

#define ROW(q, val, det) tool_table_row(t, (const char *const[]){ (q), (val), (det) })
	if (o->shape.groups > 1)
		snprintf(d, sizeof(d), "%u disks: %u mirrored pairs, each survives 1 failure",
			 o->layout.disks, o->shape.groups);
	else
		snprintf(d, sizeof(d), "%u %s, survives %u %s", o->layout.disks,
			 plural(o->layout.disks, "disk", "disks"), o->shape.tolerated,
			 plural(o->shape.tolerated, "failure", "failures"));
	ROW("layout", iosig_layout_name((enum iosig_layout_kind)o->layout.kind), d);
	ROW("MTTF", fmt_duration(a->mttf, v, sizeof(v)), "per disk");
	ROW("MTTR", fmt_duration(a->mttr, v, sizeof(v)), "per rebuild");
	snprintf(v, sizeof(v), "%.4g", o->uber);
	if (a->given[O_UBER])
		snprintf(d, sizeof(d), "given");
	else
		snprintf(d, sizeof(d), "Eq. 1: BER %g, ECC corrects %llu %s per %llu-bit sector",
			 a->ber, a->ecc, plural(a->ecc, "bit", "bits"), a->sector_bits);
	ROW("UBER", v, d);
	snprintf(d, sizeof(d), "%.4g bits", a->size * 8);
	ROW("size", fmt_bytes(a->size, v, sizeof(v)), d);
	snprintf(v, sizeof(v), "%.4g", o->h);
	ROW("h", v, "size x UBER: uncorrectable errors expected reading the file");
	snprintf(d, sizeof(d), "%.6g s", o->mttdl);
	ROW("MTTDL (Eq. 2)", fmt_duration(o->mttdl, v, sizeof(v)), d);
	snprintf(d, sizeof(d), "%.6g s, exact mean of the Markov chain Eq. 2 approximates",
		 o->chain);
	ROW("MTTDL (chain)", fmt_duration(o->chain, v, sizeof(v)), d);
	snprintf(d, sizeof(d), "within %s (1 - exp(-T/MTTDL))",
		 fmt_duration(a->lifetime, x, sizeof(x)));
	ROW("P(loss)", fmt_prob(o->p_loss, v, sizeof(v)), d);
	if (o->simulated) {
		snprintf(d, sizeof(d), "+/- %.2g %% (1 std. error), %" PRIu64 " lifetimes, seed %llu",
			 100 * o->mc.stderr_ / o->mc.mean, o->mc.trials, a->seed);
		ROW("MTTDL (MC)", fmt_duration(o->mc.mean, v, sizeof(v)), d);
		snprintf(v, sizeof(v), "%+.2g %%", 100 * (o->mc.mean / o->mttdl - 1));
		ROW("MC vs Eq. 2", v, "relative error of the simulation against the model");
		snprintf(v, sizeof(v), "%+.2g %%", 100 * (o->mc.mean / o->chain - 1));
		snprintf(d, sizeof(d), "%.2g std. errors",
			 fabs(o->mc.mean - o->chain) / o->mc.stderr_);
		ROW("MC vs chain", v, d);
		snprintf(v, sizeof(v), "%" PRIu64 " / %" PRIu64, o->mc.by_failure, o->mc.by_error);
		snprintf(d, sizeof(d), "by device failure / by uncorrectable error (%s / %s)",
			 fmt_prob((double)o->mc.by_failure / o->mc.trials, x, sizeof(x)),
			 fmt_prob((double)o->mc.by_error / o->mc.trials, y, sizeof(y)));
		ROW("losses", v, d);
	}
#undef ROW
	tool_table_print(t, stdout);
	tool_table_free(t);

	if (isfinite(o->chain) && o->chain > 0 && isfinite(o->mttdl) &&
	    fabs(o->mttdl / o->chain - 1) > EQ2_NOTE_REL) {
		double dh = (o->shape.disks - o->shape.tolerated) * o->h / o->shape.groups;

		printf("\nnote: Eq. 2 is %.0f %% %s the chain it approximates.  It assumes MTTR << "
		       "MTTF/d and (d-m) h << 1;\n      here d MTTR/MTTF = %.2g and (d-m) h = %.2g.  "
		       "See iosig-mttdl(1).\n",
		       100 * fabs(o->mttdl / o->chain - 1), o->mttdl < o->chain ? "below" : "above",
		       o->shape.disks * a->mttr / a->mttf, dh);
	}
}

static int print_json(const struct mttdl_args *a, const struct mttdl_out *o)
{
	struct json_writer w;

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "layout", iosig_layout_name((enum iosig_layout_kind)o->layout.kind));
	json_uint(&w, "disks", o->layout.disks);
	json_uint(&w, "groups", o->shape.groups);
	json_uint(&w, "disks_per_group", o->shape.disks);
	json_uint(&w, "tolerated_per_group", o->shape.tolerated);
	json_num(&w, "mttf_s", a->mttf);
	json_num(&w, "mttr_s", a->mttr);
	if (a->given[O_UBER]) {
		json_null(&w, "ber");
		json_null(&w, "ecc");
		json_null(&w, "sector_bits");
	} else {
		json_num(&w, "ber", a->ber);
		json_uint(&w, "ecc", a->ecc);
		json_uint(&w, "sector_bits", a->sector_bits);
	}
	json_num(&w, "uber", o->uber);
	json_num(&w, "size_bytes", a->size);
	json_num(&w, "h", o->h);
	json_num(&w, "mttdl_s", o->mttdl);
	json_num(&w, "chain_mttdl_s", o->chain);
	json_num(&w, "lifetime_s", a->lifetime);
	json_num(&w, "p_loss", o->p_loss);
	if (o->simulated) {
		json_obj_begin(&w, "simulation");
		json_uint(&w, "trials", o->mc.trials);
		json_uint(&w, "seed", a->seed);
		json_num(&w, "mean_s", o->mc.mean);
		json_num(&w, "stderr_s", o->mc.stderr_);
		json_num(&w, "rel_error_vs_eq2", o->mc.mean / o->mttdl - 1);
		json_num(&w, "rel_error_vs_chain", o->mc.mean / o->chain - 1);
		json_uint(&w, "by_failure", o->mc.by_failure);
		json_uint(&w, "by_error", o->mc.by_error);
		json_obj_end(&w);
	}
	json_obj_end(&w);
	return json_finish(&w) ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct mttdl_args a;
	struct mttdl_out o = { 0 };
	struct mdl_chain *chain;
	int r;

	r = parse_args(argc, argv, &a);
	if (r >= 0)
		return r;
	r = build_layout(&a, &o.layout);
	if (r)
		return r;
	if (mdl_layout_shape(&o.layout, &o.shape)) {
		tool_err(CMD, "internal error: layout %s with %u disks was accepted but is invalid",
			 a.layout_name, o.layout.disks);
		return TOOL_EXIT_FAIL;
	}

	o.uber = a.given[O_UBER] ? a.uber : iosig_uber(a.ber, (unsigned)a.sector_bits, (unsigned)a.ecc);
	o.h = a.size * 8 * o.uber;
	o.mttdl = iosig_mttdl(&o.layout, a.mttf, a.mttr, o.uber, a.size);
	o.p_loss = iosig_p_loss(o.mttdl, a.lifetime);
	r = mdl_chain_new(&o.shape, a.mttf, a.mttr, o.h, &chain);
	if (r) {
		tool_err(CMD, "cannot build the Markov chain: %s", strerror(-r));
		return TOOL_EXIT_FAIL;
	}
	o.chain = mdl_chain_mttdl(chain);
	mdl_chain_free(chain);

	if (a.trials) {
		r = iosig_mttdl_simulate(&o.layout, a.mttf, a.mttr, o.uber, a.size, a.trials, a.seed,
					 &o.mc);
		o.simulated = r == 0;
	}
	if (a.json) {
		if (print_json(&a, &o))
			return TOOL_EXIT_FAIL;
	} else {
		print_table(&a, &o);
	}
	fflush(stdout);
	if (r == -ERANGE) {
		tool_err(CMD, "cannot simulate: a failure leads to data loss with a probability that "
			      "underflows a double (MTTDL beyond ~1e300 s); the analytic value is "
			      "all there is");
		return TOOL_EXIT_FAIL;
	}
	if (r) {
		tool_err(CMD, "simulation failed: %s", strerror(-r));
		return TOOL_EXIT_FAIL;
	}
	return TOOL_EXIT_OK;
}

const struct tool_cmd cmd_mttdl = {
	.name = "mttdl",
	.summary = "MTTDL, UBER and P(loss) of a layout (IOSIG Eq. 1, 2); Monte Carlo check",
	.run = run,
};
