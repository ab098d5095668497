/* SPDX-License-Identifier: MIT */
/*
 * bench_tiers.c - what the tier-using policies do on this machine's real
 * devices (issue 13, "Measured"; docs/results.md, "Real devices"): iosigd
 * with a real tier on loop devices made slow with the cgroup v1 blkio
 * throttle (the rig of bench_throttle.h), each scenario's modes side by
 * side in one run on the same mounts.  JSON on stdout.
 *
 * Devices: "hdd" an ext4 loop device throttled to --hdd-iops/--hdd-bps
 * (a disk arm: every request costs at least 1/iops); "ssd" an unthrottled
 * ext4 loop device; "slowssd" an ext4 loop device throttled to
 * --ssd-iops/--ssd-bps; "ram" a tmpfs.
 *
 * Scenarios (workloads: daemon_io mapreduce roles, tagged by iosig-redirect):
 *   bid      home hdd, tier ssd: noop, bid-hdd, bid-hybrid; bulky
 *            sequential writers (256 KiB write() calls) and small
 *            interrupting ones (4 KiB write + fdatasync, 10 ms apart)
 *   mios     home slowssd, tier hdd (its BCW state predicted from the
 *            policy's options): noop (SSD only), mios-d, mios-e, mios-d
 *            with defer_close (the last close does not write the tier's
 *            data home); bursty small writers (bursts of 8 x 4 KiB write +
 *            fdatasync)
 *   miosq    as mios with 16 bursty writers and the slowed SSD at a quarter
 *            of --ssd-iops: its queue builds, which MIOS's steering needs
 *            (it redirects a write only while the SSD has more than L
 *            requests in its queue; 4 writers rarely queue any)
 *   nvcache  home hdd, tier ram: noop, nvcache; closed-loop readers (4 KiB
 *            pread at random in 64 MiB files written before) and writers
 *            (4 KiB pwrite at random, one fsync at the end)
 *   nvseq    home hdd, tier ram: noop, nvcache (its read-ahead filled into
 *            the tier); closed-loop sequential
 *            readers (16 KiB preads one after the other in 64 MiB files
 *            written before) and nvcache's random writers: nvcache's
 *            read-ahead (path b), which random readers never start
 *   useless  home hdd, tier ssd: noop, bid-hdd, bid-hybrid, nvcache (tier ram);
 *            bulky sequential writers only - the tier can only cost
 * Per mode: the makespan, each role's call latency (mean, p99), completion
 * (mean, first and last process) and throughput, the bytes written to the home and the tier devices (their
 * /sys/dev/block stat: everything, the kernel's write-back included), the
 * bytes the throttle charged the workload's cgroup on the home device while
 * it ran (the rest passed unthrottled: the kernel's own write-back), the
 * daemon's tier figures (bytes written to it, read from it, filled into it
 * by a policy's read-ahead, written back; records; reads it was sent for
 * data it did not hold: reads_elsewhere) and the policy's counters; then
 * ratios to the scenario's baseline (its first mode).
 *
 *   bench_tiers [--size N | --quick] [--rounds N] [--scenarios LIST] [--hdd-bps BYTES]
 *               [--hdd-iops N] [--ssd-bps BYTES] [--ssd-iops N] [--dir DIR]
 * Root only, with a cgroup v1 blkio hierarchy; else exit 77 with the reason.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RIG_NAME "bench_tiers"
#define RIG_CG_PREFIX "iosig-bench-tiers."
#include "bench_throttle.h"
#include "json.h"

#define MiB (1024ull * 1024)
#define SPAN (64ull << 20) /* daemon_io's random range */

struct opts {
	unsigned size, rounds;
	bool quick;
	uint64_t hdd_bps, hdd_iops, ssd_bps, ssd_iops;
	char scenarios[256];
	const char *dir;
};

struct dev {
	const char *name;
	char mnt[RIG_PATH], path[64];
	dev_t devno; /* 0: tmpfs */
	uint64_t bps, iops; /* its throttle, 0 = none */
};

/* Throttles d (the limits written again start the throttle's accounting
 * afresh: throttle()'s second call before each mode). */
static void throttle(struct dev *d, uint64_t bps, uint64_t iops)
{
	d->bps = bps;
	d->iops = iops;
	rig_throttle(d->devno, bps, iops);
}

static struct dev hdd = { .name = "hdd" }, ssd = { .name = "ssd" }, slowssd = { .name = "slowssd" },
		  ram = { .name = "ram" };

/* A role of a scenario's workload. */
struct role {
	const char *role;      /* daemon_io mapreduce role */
	unsigned count, io;    /* processes; bytes per call */
	uint64_t bytes;        /* per process */
	unsigned think_us;
	const char *sig;       /* its signature */
};

#define ROLES_MAX 3
#define MODES_MAX 4

struct mode {
	const char *policy;    /* the daemon's */
	const char *label;     /* the mode's name when not the policy's */
	bool defer;            /* defer_close: yes */
	struct dev *tier;      /* NULL: none */
	const char *tier_cls, *tier_size;
	struct samples makespan, lat[ROLES_MAX], done[ROLES_MAX], first[ROLES_MAX], lastd[ROLES_MAX];
	uint64_t home_written, home_run_written, home_run_throttled, tier_written, d_tier_written, d_writeback, d_records;
	uint64_t d_tier_read, d_fill, d_elsewhere; /* the tier's read_bytes, fill_bytes, reads_elsewhere */
	double counters[4];
};

struct scenario {
	const char *name, *what;
	struct dev *home;
	const char *home_cls;
	struct role roles[ROLES_MAX];
	unsigned nroles;
	struct mode modes[MODES_MAX];
	unsigned nmodes;
	const char *counters[4]; /* policy counters reported */
	unsigned ssd_div;        /* the slowed SSD at --ssd-iops / this (0: 1) */
};

static void run_mode(const struct opts *o, struct scenario *sc, struct mode *md, unsigned round)
{
	char dir[RIG_PATH], tier[RIG_PATH], name[128];
	int go[2], ready[2];
	unsigned total = 0, got = 0, k = 0;
	uint64_t h0, t0w, h1, t1w, ios0, ios1, thr0, thr1;
	double t0, last = 0;
	char c;

	snprintf(name, sizeof(name), "%s-%s", sc->name, md->label ? md->label : md->policy);
	pathf(dir, "%s/%s-%u", sc->home->mnt, name, round);
	if (mkdir(dir, 0755) < 0)
		rig_fail("mkdir %s: %s", dir, strerror(errno));
	/* The readers' files: written before, outside the cgroup, and out of
	 * the page cache. */
	for (unsigned r = 0; r < sc->nroles; r++) {
		static char buf[1 << 20];

		if (strcmp(sc->roles[r].role, "read") && strcmp(sc->roles[r].role, "seqread"))
			continue;
		memset(buf, 'R', sizeof(buf));
		for (unsigned i = 0; i < sc->roles[r].count; i++) {
			char file[RIG_PATH];
			int fd;

			pathf(file, "%s/%s%u", dir, sc->roles[r].role, i);
			fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			for (uint64_t w = 0; fd >= 0 && w < SPAN; w += sizeof(buf))
				if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
					rig_fail("%s: write: %s", file, strerror(errno));
			if (fd < 0 || fsync(fd) < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
				rig_fail("%s: %s", file, strerror(errno));
			close(fd);
		}
	}
	rig_iosigd_init(name);
	if (md->tier) {
		pathf(tier, "{ mount: \"%s\", size: %s, class: %s }", md->tier->mnt, md->tier_size, md->tier_cls);
	}
	if (bench_iosigd_config(rig_iosigd.cfg, sc->home->mnt, sc->home_cls, md->policy, 0,
				md->tier ? tier : NULL,
				md->defer ? "defer_close: yes" : NULL) < 0)
		rig_fail("cannot write %s", rig_iosigd.cfg);
	rig_iosigd_start(name);
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		rig_fail("pipe: %s", strerror(errno));
	for (unsigned r = 0; r < sc->nroles; r++) {
		const struct role *ro = &sc->roles[r];

		for (unsigned i = 0; i < ro->count; i++, total++) {
			char file[RIG_PATH], out[RIG_PATH], bytes[32], io[32], think[32], seed[32];
			char *argv[] = { "daemon_io", "mapreduce", (char *)ro->role, file, bytes, io,
					 think, seed, NULL };

			pathf(file, "%s/%s%u", dir, ro->role, i);
			pathf(out, "%s/out-%s-%u-%u", rig_work, name, round, total);
			snprintf(bytes, sizeof(bytes), "%" PRIu64, ro->bytes);
			snprintf(io, sizeof(io), "%u", ro->io);
			snprintf(think, sizeof(think), "%u", ro->think_us);
			snprintf(seed, sizeof(seed), "%u", 1000 + total + 100 * round);
			if (!strcmp(ro->role, "bulk"))
				argv[6] = NULL;
			rig_spawn(argv, ro->sig, out, go[0], ready[1]);
		}
	}
	close(go[0]);
	close(ready[1]);
	while (got < total && read(ready[0], &c, 1) == 1)
		got++;
	close(ready[0]);
	if (got < total)
		rig_fail("%s: a writer failed to start", name);
	/* Nothing of the set-up (the tier's store, the files removed after
	 * the mode before) still on its way to a disk: the loop devices share
	 * the machine's. */
	sync();
	/* A throttle idle since the mode before let a burst through at the
	 * start (the first writer's first 12-44 MiB at once in some rounds,
	 * none in others: per-writer completion times 0.18 s apart); each
	 * mode starts from fresh limits. */
	for (struct dev *d = &hdd; d; d = d == &hdd ? &slowssd : NULL)
		if (d->bps)
			throttle(d, d->bps, d->iops);
	rig_throttled(sc->home->devno, &ios0, &thr0);
	h0 = rig_dev_written(sc->home->devno);
	t0w = md->tier && md->tier->devno ? rig_dev_written(md->tier->devno) : 0;
	t0 = bench_now();
	close(go[1]);
	rig_wait_writers(name);
	/* What reached home while the workload ran (the rest of the tier's
	 * data goes home when the daemon stops). */
	md->home_run_written += rig_dev_written(sc->home->devno) - h0;
	rig_throttled(sc->home->devno, &ios1, &thr1);
	md->home_run_throttled += thr1 - thr0;
	for (unsigned r = 0; r < sc->nroles; r++) {
		struct samples done = { 0 };

		for (unsigned i = 0; i < sc->roles[r].count; i++, k++) {
			char out[RIG_PATH];
			double end;

			pathf(out, "%s/out-%s-%u-%u", rig_work, name, round, k);
			end = rig_collect(out, t0, &md->lat[r]);
			add(&done, end);
			last = end > last ? end : last;
		}
		add(&md->done[r], mean(&done));
		add(&md->first[r], quantile(&done, 0));
		add(&md->lastd[r], quantile(&done, 1));
		free(done.v);
	}
	add(&md->makespan, last);
	{
		char *st = rig_daemon_status(rig_iosigd.sock), *p, key[RIG_PATH];

		pathf(key, "\"%s\"", sc->home->mnt);
		p = st ? strstr(st, key) : NULL;
		if (!p)
			rig_fail("%s: the daemon's status has no device for the mount %s:\n%.3000s", name, sc->home->mnt, st ? st : "(none)");
		for (unsigned i = 0; i < 4 && sc->counters[i]; i++)
			md->counters[i] += json_field(p, sc->counters[i]) > 0 ? json_field(p, sc->counters[i]) : 0;
		p = md->tier ? strstr(p, "\"tiers\"") : NULL;
		if (md->tier && !p)
			rig_fail("%s: the daemon's status has no tier", name);
		if (p) {
			md->d_tier_written += (uint64_t)json_field(p, "written_bytes");
			md->d_writeback += (uint64_t)json_field(p, "writeback_bytes");
			md->d_records += (uint64_t)json_field(p, "records_total");
			md->d_tier_read += (uint64_t)json_field(p, "read_bytes");
			md->d_fill += (uint64_t)json_field(p, "fill_bytes");
			md->d_elsewhere += (uint64_t)json_field(p, "reads_elsewhere");
		}
		free(st);
	}
	/* SIGTERM: the daemon writes its tier's data home and stops. */
	rig_iosigd_stop(name);
	rig_syncfs(sc->home->mnt);
	h1 = rig_dev_written(sc->home->devno);
	t1w = md->tier && md->tier->devno ? rig_dev_written(md->tier->devno) : 0;
	md->home_written += h1 - h0;
	md->tier_written += t1w - t0w;
	rig_remove_tree(dir);
	if (md->tier) {
		pathf(tier, "%s/.iosigd", md->tier->mnt);
		rig_remove_tree(tier);
	}
	rig_syncfs(sc->home->mnt);
}

/* ---- output ---- */

static double role_mib_s(const struct role *ro, struct mode *md, unsigned r)
{
	double t = median(&md->done[r]);

	return t > 0 ? (double)ro->bytes / (double)MiB / t : -1;
}

static void ratio(struct json_writer *w, const char *key, double a, double base)
{
	json_num(w, key, a >= 0 && base > 0 ? a / base : -1);
}

static void print_scenario(struct json_writer *w, const struct opts *o, struct scenario *sc)
{
	struct mode *base = &sc->modes[0];

	json_obj_begin(w, NULL);
	json_str(w, "scenario", sc->name);
	json_str(w, "what", sc->what);
	json_str(w, "home", sc->home->name);
	json_str(w, "home_class", sc->home_cls);
	if (sc->ssd_div) {
		json_uint(w, "slowssd_bps", o->ssd_bps / sc->ssd_div);
		json_uint(w, "slowssd_iops", o->ssd_iops / sc->ssd_div ? o->ssd_iops / sc->ssd_div : 1);
	}
	json_arr_begin(w, "roles");
	for (unsigned r = 0; r < sc->nroles; r++) {
		json_obj_begin(w, NULL);
		json_str(w, "role", sc->roles[r].role);
		json_uint(w, "processes", sc->roles[r].count);
		json_uint(w, "io_bytes", sc->roles[r].io);
		json_num(w, "MiB_each", (double)sc->roles[r].bytes / (double)MiB);
		json_uint(w, "think_us", sc->roles[r].think_us);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_arr_begin(w, "modes");
	for (unsigned m = 0; m < sc->nmodes; m++) {
		struct mode *md = &sc->modes[m];

		json_obj_begin(w, NULL);
		json_str(w, "mode", md->label ? md->label : md->policy);
		json_str(w, "policy", md->policy);
		json_bool(w, "defer_close", md->defer);
		json_str(w, "tier", md->tier ? md->tier->name : "none");
		json_num(w, "makespan_s", median(&md->makespan));
		for (unsigned r = 0; r < sc->nroles; r++) {
			json_obj_begin(w, sc->roles[r].role);
			json_num(w, "completion_mean_s", median(&md->done[r]));
			json_num(w, "completion_first_s", median(&md->first[r]));
			json_num(w, "completion_last_s", median(&md->lastd[r]));
			json_num(w, "MiB_s_each", role_mib_s(&sc->roles[r], md, r));
			json_num(w, "call_mean_ms", mean(&md->lat[r]) / 1e3);
			json_num(w, "call_p99_ms", quantile(&md->lat[r], 0.99) / 1e3);
			json_uint(w, "calls", md->lat[r].n);
			json_obj_end(w);
		}
		json_num(w, "home_written_MiB", (double)md->home_written / o->rounds / (double)MiB);
		json_num(w, "home_written_run_MiB", (double)md->home_run_written / o->rounds / (double)MiB);
		json_num(w, "home_throttled_run_MiB", (double)md->home_run_throttled / o->rounds / (double)MiB);
		json_num(w, "tier_device_written_MiB", (double)md->tier_written / o->rounds / (double)MiB);
		json_num(w, "tier_written_MiB", (double)md->d_tier_written / o->rounds / (double)MiB);
		json_num(w, "tier_writeback_MiB", (double)md->d_writeback / o->rounds / (double)MiB);
		json_uint(w, "tier_records", md->d_records / o->rounds);
		json_num(w, "tier_read_MiB", (double)md->d_tier_read / o->rounds / (double)MiB);
		json_num(w, "tier_fill_MiB", (double)md->d_fill / o->rounds / (double)MiB);
		json_uint(w, "tier_reads_elsewhere", md->d_elsewhere / o->rounds);
		json_obj_begin(w, "counters");
		for (unsigned i = 0; i < 4 && sc->counters[i]; i++)
			json_num(w, sc->counters[i], md->counters[i] / o->rounds);
		json_obj_end(w);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_begin(w, "vs_baseline");
	json_str(w, "baseline", base->label ? base->label : base->policy);
	for (unsigned m = 1; m < sc->nmodes; m++) {
		struct mode *md = &sc->modes[m];

		json_obj_begin(w, md->label ? md->label : md->policy);
		ratio(w, "makespan", median(&md->makespan), median(&base->makespan));
		for (unsigned r = 0; r < sc->nroles; r++) {
			char key[64];

			snprintf(key, sizeof(key), "%s_call_mean", sc->roles[r].role);
			ratio(w, key, mean(&md->lat[r]), mean(&base->lat[r]));
			snprintf(key, sizeof(key), "%s_call_p99", sc->roles[r].role);
			ratio(w, key, quantile(&md->lat[r], 0.99), quantile(&base->lat[r], 0.99));
			snprintf(key, sizeof(key), "%s_throughput", sc->roles[r].role);
			ratio(w, key, role_mib_s(&sc->roles[r], md, r), role_mib_s(&sc->roles[r], base, r));
		}
		ratio(w, "home_written", (double)md->home_written, (double)base->home_written);
		ratio(w, "home_written_run", (double)md->home_run_written, (double)base->home_run_written);
		json_obj_end(w);
	}
	json_obj_end(w);
	json_obj_end(w);
}

/* ---- main ---- */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: bench_tiers [--size N | --quick] [--rounds N] [--scenarios LIST] [--hdd-bps BYTES]\n"
		"                   [--hdd-iops N] [--ssd-bps BYTES] [--ssd-iops N] [--dir DIR]\n"
		"  --size N          work multiplier (default 1: about three minutes in all)\n"
		"  --quick           a quarter of --size 1 (a smoke test)\n"
		"  --rounds N        repeat every mode N times, in rotated order (default 1)\n"
		"  --scenarios LIST  comma-separated, of bid,mios,nvcache,nvseq,useless (default all)\n"
		"  --hdd-bps BYTES   the \"HDD\"'s throttle, bytes per second (default 157286400)\n"
		"  --hdd-iops N      the \"HDD\"'s throttle, operations per second (default 150)\n"
		"  --ssd-bps BYTES   the slowed \"SSD\" (mios), bytes per second (default 209715200)\n"
		"  --ssd-iops N      the slowed \"SSD\", operations per second (default 2000)\n"
		"  --dir DIR         where the work directory goes (default /var/tmp)\n"
		"Root only; exit 77 when it cannot run here.\n");
}

/* The scenarios --scenarios knows, in the order they run. */
/* mios and miosq: bursty writers on the slowed SSD (at --ssd-iops / ssd_div),
 * SSD only against MIOS with the HDD as its log. */
static struct scenario mios_scenario(const char *name, const char *what, unsigned writers, uint64_t unit,
				     unsigned ssd_div)
{
	return (struct scenario){
		.name = name, .home = &slowssd, .home_cls = "ssd", .what = what,
		.roles = { { "burst", writers, 4096, unit * 64 * 4096, 20000, "random size_per_io(4*KiB)" } },
		.nroles = 1,
		.modes = { { .policy = "noop" },
			   { .policy = "mios-d", .tier = &hdd, .tier_cls = "hdd", .tier_size = "640MiB" },
			   { .policy = "mios-e", .tier = &hdd, .tier_cls = "hdd", .tier_size = "640MiB" },
			   { .policy = "mios-d", .label = "mios-d+defer_close", .defer = true, .tier = &hdd,
			     .tier_cls = "hdd", .tier_size = "640MiB" } },
		.nmodes = 4,
		.counters = { "redirected_writes", "padding_bytes" },
		.ssd_div = ssd_div };
}

static const char *const scenario_names[] = { "bid", "mios", "miosq", "nvcache", "nvseq", "useless" };
#define NSCENARIOS (sizeof(scenario_names) / sizeof(scenario_names[0]))

static bool wanted(const struct opts *o, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = o->scenarios; (p = strstr(p, name)); p += n)
		if ((p == o->scenarios || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct opts o = { .size = 1, .rounds = 1, .hdd_bps = 150 * MiB, .hdd_iops = 150, .ssd_bps = 200 * MiB,
			  .ssd_iops = 2000, .scenarios = "bid,mios,miosq,nvcache,nvseq,useless", .dir = "/var/tmp" };
	struct scenario sc[NSCENARIOS];
	unsigned nsc = 0;
	uint64_t unit;
	struct json_writer w;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--quick")) {
			o.quick = true;
			continue;
		}
		if (!v || strncmp(a, "--", 2)) {
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--size"))
			o.size = (unsigned)rig_number(v, a, 100);
		else if (!strcmp(a, "--rounds"))
			o.rounds = (unsigned)rig_number(v, a, 100);
		else if (!strcmp(a, "--hdd-bps"))
			o.hdd_bps = rig_number(v, a, 1ull << 40);
		else if (!strcmp(a, "--hdd-iops"))
			o.hdd_iops = rig_number(v, a, 1000000);
		else if (!strcmp(a, "--ssd-bps"))
			o.ssd_bps = rig_number(v, a, 1ull << 40);
		else if (!strcmp(a, "--ssd-iops"))
			o.ssd_iops = rig_number(v, a, 1000000);
		else if (!strcmp(a, "--scenarios"))
			snprintf(o.scenarios, sizeof(o.scenarios), "%s", v);
		else if (!strcmp(a, "--dir"))
			o.dir = v;
		else {
			usage(stderr);
			return 2;
		}
	}
	for (const char *p = o.scenarios; *p;) {
		size_t n = strcspn(p, ","), k = 0;

		while (k < NSCENARIOS && (strlen(scenario_names[k]) != n || strncmp(p, scenario_names[k], n)))
			k++;
		if (k == NSCENARIOS) {
			fprintf(stderr, "bench_tiers: --scenarios: unknown scenario '%.*s' (", (int)n, p);
			for (k = 0; k < NSCENARIOS; k++)
				fprintf(stderr, "%s%s", k ? ", " : "", scenario_names[k]);
			fprintf(stderr, ")\n");
			return 2;
		}
		p += n + (p[n] == ',');
	}
	if (geteuid() != 0) {
		printf("bench_tiers: skipped: needs root (loop devices, mounts, the blkio cgroup)\n");
		return 77;
	}
	/* unit: a quarter of the default work under --quick. */
	unit = o.quick ? 1 : 4ull * o.size;
	if (wanted(&o, "bid"))
		sc[nsc++] = (struct scenario){
			.name = "bid", .home = &hdd, .home_cls = "hdd",
			.what = "MapReduce-like mix on the HDD, the SSD as bid-hybrid's tier",
			.roles = { { "bulk", 4, 256 * 1024, unit * 4 * MiB, 0, "sequential size_per_io(256*KiB)" },
				   { "small", 4, 4096, unit * 10 * 4096, 10000, "random size_per_io(4*KiB)" } },
			.nroles = 2,
			.modes = { { .policy = "noop" }, { .policy = "bid-hdd" },
				   { .policy = "bid-hybrid", .tier = &ssd, .tier_cls = "ssd", .tier_size = "512MiB" } },
			.nmodes = 3,
			.counters = { "tiered_queues", "bulky_queues", "migrated_bytes", "homed_late_writes" } };
	if (wanted(&o, "mios"))
		sc[nsc++] = mios_scenario("mios", "bursty small writes on the slowed SSD, the HDD as MIOS's log",
					  4, unit, 0);
	if (wanted(&o, "miosq"))
		sc[nsc++] = mios_scenario("miosq", "bursty small writes of 16 processes on the slowed SSD at a "
					  "quarter of its IOPS, the HDD as MIOS's log", 16, unit, 4);
	if (wanted(&o, "nvcache"))
		sc[nsc++] = (struct scenario){
			.name = "nvcache", .home = &hdd, .home_cls = "hdd",
			.what = "closed-loop readers and writers on the HDD, tmpfs as nvcache's memory tier",
			.roles = { { "read", 2, 4096, unit * 100 * 4096, 0, "random size_per_io(4*KiB)" },
				   { "rand", 2, 4096, unit * 100 * 4096, 0, "random size_per_io(4*KiB)" } },
			.nroles = 2,
			.modes = { { .policy = "noop" },
				   { .policy = "nvcache", .tier = &ram, .tier_cls = "ram", .tier_size = "128MiB" } },
			.nmodes = 2,
			.counters = { "read_hits", "read_misses", "writes_cached", "readahead_bytes" } };
	/*
	 * 16 KiB reads: nvcache reads ahead ra_size (512 KiB) past each
	 * sequential read, in whole lines (4 KiB), from where its window
	 * ended, so after a reader's first window every read issues one
	 * read-ahead and one fill of its own length.  4 KiB reads would make
	 * each of them a single line - as many home commands as the reader
	 * alone issues, and a tier record per 4 KiB; 16 KiB is four lines a
	 * command, and a window still holds 32 reads, so the reader stays
	 * a whole window behind its read-ahead.
	 */
	if (wanted(&o, "nvseq"))
		sc[nsc++] = (struct scenario){
			.name = "nvseq", .home = &hdd, .home_cls = "hdd",
			.what = "closed-loop sequential readers and random writers on the HDD, tmpfs as nvcache's memory tier",
			.roles = { { "seqread", 2, 16384, unit * 100 * 16384, 0, "sequential size_per_io(16*KiB)" },
				   { "rand", 2, 4096, unit * 100 * 4096, 0, "random size_per_io(4*KiB)" } },
			.nroles = 2,
			.modes = { { .policy = "noop" },
				   { .policy = "nvcache", .tier = &ram, .tier_cls = "ram", .tier_size = "128MiB" } },
			.nmodes = 2,
			.counters = { "read_hits", "read_misses", "readahead_bytes", "fill_bytes" } };
	if (wanted(&o, "useless"))
		sc[nsc++] = (struct scenario){
			.name = "useless", .home = &hdd, .home_cls = "hdd",
			.what = "large sequential writes only on the HDD: a tier cannot help",
			.roles = { { "bulk", 4, 1024 * 1024, unit * 16 * MiB, 0, "sequential size_per_io(1*MiB)" } },
			.nroles = 1,
			.modes = { { .policy = "noop" },
				   { .policy = "bid-hdd" },
				   { .policy = "bid-hybrid", .tier = &ssd, .tier_cls = "ssd", .tier_size = "512MiB" },
				   { .policy = "nvcache", .tier = &ram, .tier_cls = "ram", .tier_size = "128MiB" } },
			.nmodes = 4,
			.counters = { "tiered_queues", "writes_cached", "writes_bypassed", "writes_given_home" } };
	rig_setup(o.dir);
	hdd.devno = rig_loop("hdd", 2ull << 30, hdd.mnt, hdd.path, sizeof(hdd.path));
	throttle(&hdd, o.hdd_bps, o.hdd_iops);
	ssd.devno = rig_loop("ssd", 1ull << 30, ssd.mnt, ssd.path, sizeof(ssd.path));
	slowssd.devno = rig_loop("slowssd", 256 * MiB, slowssd.mnt, slowssd.path, sizeof(slowssd.path));
	rig_tmpfs("ram", 256 * MiB, ram.mnt);
	for (unsigned s = 0; s < nsc; s++) {
		unsigned div = sc[s].ssd_div ? sc[s].ssd_div : 1;

		throttle(&slowssd, o.ssd_bps / div, o.ssd_iops / div ? o.ssd_iops / div : 1);
		for (unsigned r = 0; r < o.rounds; r++)
			for (unsigned m = 0; m < sc[s].nmodes; m++)
				run_mode(&o, &sc[s], &sc[s].modes[(m + r) % sc[s].nmodes], r);
	}
	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "bench", "tiers");
	json_obj_begin(&w, "devices");
	json_str(&w, "throttle", "cgroup v1 blkio.throttle.{write,read}_{bps,iops}_device");
	json_uint(&w, "hdd_bps", o.hdd_bps);
	json_uint(&w, "hdd_iops", o.hdd_iops);
	json_uint(&w, "slowssd_bps", o.ssd_bps);
	json_uint(&w, "slowssd_iops", o.ssd_iops);
	json_str(&w, "ssd", "ext4 on an unthrottled loop device");
	json_str(&w, "ram", "tmpfs");
	json_obj_end(&w);
	json_uint(&w, "rounds", o.rounds);
	json_arr_begin(&w, "scenarios");
	for (unsigned s = 0; s < nsc; s++)
		print_scenario(&w, &o, &sc[s]);
	json_arr_end(&w);
	json_obj_end(&w);
	json_finish(&w);
	rig_cleanup();
	for (unsigned s = 0; s < nsc; s++)
		for (unsigned m = 0; m < sc[s].nmodes; m++) {
			free(sc[s].modes[m].makespan.v);
			for (unsigned r = 0; r < ROLES_MAX; r++) {
				free(sc[s].modes[m].lat[r].v);
				free(sc[s].modes[m].done[r].v);
				free(sc[s].modes[m].first[r].v);
				free(sc[s].modes[m].lastd[r].v);
			}
		}
	return 0;
}
