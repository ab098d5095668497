/* SPDX-License-Identifier: MIT */
/*
 * bench_hdd.c - what the home-device policies do on this machine's real
 * devices (docs/daemon.md, "Measured"): concurrent MapReduce-like writer
 * processes, as in the BID paper's workloads - bulky sequential writers
 * and small interrupting ones - on an ext4 loop device made slow with the
 * cgroup v1 blkio throttle, plainly and through iosigd under each policy,
 * side by side in one run on the same mount.  JSON on stdout.
 *
 * The device: blkio.throttle.{write,read}_{bps,iops}_device of a cgroup
 * of its own for the loop device; the writers and the daemon run in that
 * cgroup, so every bio they submit (a plain writer's fsync, the daemon's
 * sync_file_range and fsync) waits for its share of the bandwidth and of
 * the I/O operations: a request costs at least 1/iops, whatever its size,
 * as a seek does on a disk, and a large one costs its bytes/bps.
 *
 * The workload (daemon_io mapreduce; tagged through iosig-redirect):
 *   bulk   writers: BULK_MiB each, sequential write() calls of 256 KiB,
 *          then fsync + close ('sequential size_per_io(256*KiB)');
 *   small  writers: 4 KiB records at random offsets, each write() +
 *          fdatasync, 10 ms apart ('random size_per_io(4*KiB)').
 * Per mode (plain, then one iosigd per policy): the makespan (start to the
 * last writer's data durable), each class's completion (mean, max), the
 * latency of each call (bulk: write(); small: write() + fdatasync) - mean
 * and p99 - and the device's operations and bytes (the throttle's own
 * counters: what the cgroup submitted); through the daemon its commands
 * and mean request latency.  Then each policy's ratios to noop.
 *
 * Root only, with a cgroup v1 blkio hierarchy (mounted, or mountable in a
 * private mount namespace); else exit 77 with the reason.  Everything it
 * makes goes with it: the mount (a private namespace), the loop device
 * (auto-clear), the daemon and writers (they die with it), the cgroup
 * (removed at exit; one left by a killed run is removed by the next).
 *
 *   bench_hdd [--size N | --quick] [--rounds N] [--bps BYTES] [--iops N] [--bulk N]
 *             [--small N] [--queue-depth N] [--policies LIST] [--dir DIR]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RIG_NAME "bench_hdd"
#define RIG_CG_PREFIX "iosig-bench-hdd."
#include "bench_throttle.h"
#include "json.h"
#include "policy.h"

#define MiB (1024ull * 1024)
#define MODES_MAX 16
#define WRITERS_MAX RIG_WRITERS_MAX

struct opts {
	unsigned size, rounds, bulk, small, queue_depth;
	uint64_t bulk_bytes, records;      /* per bulk writer; per small writer */
	uint64_t bps, iops;
	char policies[512];
	const char *dir;             /* work directory's parent */
};

struct mode {
	const char *name;            /* "plain" or a policy */
	bool daemon;
	struct samples makespan, bulk_done_mean, bulk_done_max, small_done_mean, small_done_max;
	struct samples bulk_lat, small_lat;  /* us */
	uint64_t ios, bytes, written;       /* summed over rounds */
	struct samples d_commands, d_requests, d_expedited, d_latency_ms;
};

static char mnt[RIG_PATH], dev[64];
static dev_t devno;

static void setup(const struct opts *o)
{
	rig_setup(o->dir);
	devno = rig_loop("mnt", (unsigned long long)(2 + o->size) << 30, mnt, dev, sizeof(dev));
	rig_throttle(devno, o->bps, o->iops);
}

/* ---- one mode ---- */

static const char *signature(bool bulk)
{
	return bulk ? "sequential size_per_io(256*KiB)" : "random size_per_io(4*KiB)";
}

static void spawn(const struct opts *o, const struct mode *md, unsigned i, const char *dir,
		  const char *out, int go, int ready)
{
	bool bulk = i < o->bulk;
	char file[RIG_PATH], bytes[32], io[32], seed[32];
	char *argv[] = { "daemon_io", "mapreduce", bulk ? "bulk" : "small", file, bytes, io,
			 bulk ? NULL : "10000", seed, NULL };

	pathf(file, "%s/%s%u", dir, bulk ? "bulk" : "small", i);
	snprintf(bytes, sizeof(bytes), "%" PRIu64, bulk ? o->bulk_bytes : o->records * 4096);
	snprintf(io, sizeof(io), "%u", bulk ? 256u * 1024 : 4096u);
	snprintf(seed, sizeof(seed), "%u", 1000 + i);
	rig_spawn(argv, md->daemon ? signature(bulk) : NULL, out, go, ready);
}

static void run_mode(const struct opts *o, struct mode *md, unsigned round)
{
	char dir[RIG_PATH], key[RIG_PATH];
	int go[2], ready[2];
	unsigned total = o->bulk + o->small, got = 0;
	uint64_t ios0, bytes0, ios1, bytes1;
	struct samples bulk_done = { 0 }, small_done = { 0 };
	double t0, last = 0;
	char c;

	pathf(dir, "%s/%s-%u", mnt, md->name, round);
	if (mkdir(dir, 0755) < 0)
		rig_fail("mkdir: %s", strerror(errno));
	if (md->daemon) {
		rig_iosigd_init(md->name);
		if (bench_iosigd_config(rig_iosigd.cfg, mnt, "hdd", md->name, o->queue_depth, NULL, NULL) < 0)
			rig_fail("cannot write %s", rig_iosigd.cfg);
		rig_iosigd_start(md->name);
	}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		rig_fail("pipe: %s", strerror(errno));
	for (unsigned i = 0; i < total; i++) {
		char out[RIG_PATH];

		pathf(out, "%s/out-%s-%u-%u", rig_work, md->name, round, i);
		spawn(o, md, i, dir, out, go[0], ready[1]);
	}
	close(go[0]);
	close(ready[1]);
	/* Every writer has opened (and registered) its file. */
	while (got < total && read(ready[0], &c, 1) == 1)
		got++;
	close(ready[0]);
	if (got < total)
		rig_fail("%s: a writer failed to start", md->name);
	/* Fresh limits: a throttle idle since the mode before lets a burst
	 * through at the start, in some rounds and not in others
	 * (docs/results.md, real devices). */
	rig_throttle(devno, o->bps, o->iops);
	rig_throttled(devno, &ios0, &bytes0);
	t0 = bench_now();
	close(go[1]);
	rig_wait_writers(md->name);
	rig_throttled(devno, &ios1, &bytes1);
	md->ios += ios1 - ios0;
	md->bytes += bytes1 - bytes0;
	md->written += o->bulk * o->bulk_bytes + o->small * o->records * 4096;
	for (unsigned i = 0; i < total; i++) {
		char out[RIG_PATH];
		bool bulk = i < o->bulk;

		pathf(out, "%s/out-%s-%u-%u", rig_work, md->name, round, i);
		add(bulk ? &bulk_done : &small_done,
		    rig_collect(out, t0, bulk ? &md->bulk_lat : &md->small_lat));
	}
	for (size_t i = 0; i < bulk_done.n; i++)
		last = bulk_done.v[i] > last ? bulk_done.v[i] : last;
	for (size_t i = 0; i < small_done.n; i++)
		last = small_done.v[i] > last ? small_done.v[i] : last;
	add(&md->makespan, last);
	add(&md->bulk_done_mean, mean(&bulk_done));
	add(&md->bulk_done_max, quantile(&bulk_done, 1));
	add(&md->small_done_mean, mean(&small_done));
	add(&md->small_done_max, quantile(&small_done, 1));
	free(bulk_done.v);
	free(small_done.v);
	if (md->daemon) {
		char *st = rig_daemon_status(rig_iosigd.sock), *p;

		pathf(key, "\"%s\"", mnt);
		p = st ? strstr(st, key) : NULL;
		if (!p)
			rig_fail("%s: the daemon's status has no device for the mount", md->name);
		add(&md->d_requests, json_field(p, "requests"));
		add(&md->d_commands, json_field(p, "commands"));
		add(&md->d_expedited, json_field(p, "expedited"));
		add(&md->d_latency_ms, json_field(p, "mean_latency_ms"));
		free(st);
		rig_iosigd_stop(md->name);
	}
	/* Free the space for the next mode (unthrottled: not in the cgroup). */
	rig_remove_tree(dir);
	rig_syncfs(mnt);
}

/* ---- output ---- */

static void ratio(struct json_writer *w, const char *key, double a, double noop)
{
	json_num(w, key, a > 0 && noop > 0 ? a / noop : -1);
}

static void print_results(const struct opts *o, struct mode *modes, unsigned nmodes)
{
	struct json_writer w;
	struct mode *noop = NULL;

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "bench", "hdd");
	json_obj_begin(&w, "device");
	json_str(&w, "fs", "ext4 on a loop device");
	json_str(&w, "throttle", "cgroup v1 blkio.throttle.{write,read}_{bps,iops}_device");
	json_uint(&w, "bps", o->bps);
	json_uint(&w, "iops", o->iops);
	json_str(&w, "class", "hdd");
	json_uint(&w, "queue_depth", o->queue_depth ? o->queue_depth : 4);
	json_obj_end(&w);
	json_obj_begin(&w, "workload");
	json_uint(&w, "bulk_writers", o->bulk);
	json_uint(&w, "bulk_MiB_each", o->bulk_bytes / MiB);
	json_uint(&w, "bulk_write_KiB", 256);
	json_uint(&w, "small_writers", o->small);
	json_uint(&w, "small_records_each", o->records);
	json_uint(&w, "small_record_KiB", 4);
	json_uint(&w, "small_think_ms", 10);
	json_uint(&w, "rounds", o->rounds);
	json_obj_end(&w);
	json_arr_begin(&w, "modes");
	for (unsigned i = 0; i < nmodes; i++) {
		struct mode *md = &modes[i];

		if (!strcmp(md->name, "noop"))
			noop = md;
		json_obj_begin(&w, NULL);
		json_str(&w, "mode", md->name);
		json_bool(&w, "through_daemon", md->daemon);
		json_num(&w, "makespan_s", median(&md->makespan));
		json_obj_begin(&w, "bulk");
		json_num(&w, "completion_mean_s", median(&md->bulk_done_mean));
		json_num(&w, "completion_max_s", median(&md->bulk_done_max));
		json_num(&w, "write_mean_ms", mean(&md->bulk_lat) / 1e3);
		json_num(&w, "write_p99_ms", quantile(&md->bulk_lat, 0.99) / 1e3);
		json_obj_end(&w);
		json_obj_begin(&w, "small");
		json_num(&w, "completion_mean_s", median(&md->small_done_mean));
		json_num(&w, "completion_max_s", median(&md->small_done_max));
		json_num(&w, "write_fdatasync_mean_ms", mean(&md->small_lat) / 1e3);
		json_num(&w, "write_fdatasync_p99_ms", quantile(&md->small_lat, 0.99) / 1e3);
		json_obj_end(&w);
		json_obj_begin(&w, "device_io");
		json_uint(&w, "writes", md->ios / o->rounds);
		json_num(&w, "write_MiB", (double)md->bytes / o->rounds / (double)MiB);
		json_num(&w, "written_MiB", (double)md->written / o->rounds / (double)MiB);
		json_num(&w, "mean_write_KiB", md->ios ? (double)md->bytes / (double)md->ios / 1024 : 0);
		json_obj_end(&w);
		if (md->daemon) {
			json_obj_begin(&w, "daemon");
			json_num(&w, "requests", median(&md->d_requests));
			json_num(&w, "commands", median(&md->d_commands));
			json_num(&w, "expedited", median(&md->d_expedited));
			json_num(&w, "mean_latency_ms", median(&md->d_latency_ms));
			json_obj_end(&w);
		}
		json_obj_end(&w);
	}
	json_arr_end(&w);
	/* Ratios to noop (below 1: better than noop). */
	json_obj_begin(&w, "vs_noop");
	for (unsigned i = 0; noop && i < nmodes; i++) {
		struct mode *md = &modes[i];

		json_obj_begin(&w, md->name);
		ratio(&w, "makespan", median(&md->makespan), median(&noop->makespan));
		ratio(&w, "bulk_completion_mean", median(&md->bulk_done_mean), median(&noop->bulk_done_mean));
		ratio(&w, "bulk_write_mean", mean(&md->bulk_lat), mean(&noop->bulk_lat));
		ratio(&w, "bulk_write_p99", quantile(&md->bulk_lat, 0.99), quantile(&noop->bulk_lat, 0.99));
		ratio(&w, "small_completion_mean", median(&md->small_done_mean), median(&noop->small_done_mean));
		ratio(&w, "small_write_mean", mean(&md->small_lat), mean(&noop->small_lat));
		ratio(&w, "small_write_p99", quantile(&md->small_lat, 0.99), quantile(&noop->small_lat, 0.99));
		ratio(&w, "device_writes", (double)md->ios, (double)noop->ios);
		json_obj_end(&w);
	}
	json_obj_end(&w);
	json_obj_end(&w);
	json_finish(&w);
}

/* ---- main ---- */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: bench_hdd [--size N | --quick] [--rounds N] [--bps BYTES] [--iops N] [--bulk N] [--small N]\n"
		"                 [--queue-depth N] [--policies LIST] [--dir DIR]\n"
		"  --size N         work multiplier: N x 16 MiB per bulk writer, N x 40 records per\n"
		"                   small writer (default 1: about a minute in all)\n"
		"  --quick          a quarter of --size 1 (a smoke test)\n"
		"  --rounds N       repeat every mode N times, in rotated order (default 1)\n"
		"  --bps BYTES      throttle: bytes per second, writes and reads (default 41943040)\n"
		"  --iops N         throttle: operations per second (default 100)\n"
		"  --bulk N         bulky sequential writers (default 4)\n"
		"  --small N        small interrupting writers (default 4)\n"
		"  --queue-depth N  the daemon's commands in flight (default: its own for a disk, 4)\n"
		"  --policies LIST  comma-separated policies (default noop,deadline,cfq,bfq,bid-hdd)\n"
		"  --dir DIR        where the work directory goes (default /var/tmp)\n"
		"Root only; exit 77 when it cannot run here.\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .size = 1, .rounds = 1, .bulk = 4, .small = 4, .bps = 40 * MiB, .iops = 100,
			  .policies = "noop,deadline,cfq,bfq,bid-hdd", .dir = "/var/tmp" };
	struct mode modes[MODES_MAX] = { { .name = "plain" } };
	unsigned nmodes = 1;
	bool quick = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--quick")) {
			quick = true;
			continue;
		}
		if (!v || strncmp(a, "--", 2)) {
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--size"))
			o.size = (unsigned)rig_number(v, a, 1000);
		else if (!strcmp(a, "--rounds"))
			o.rounds = (unsigned)rig_number(v, a, 100);
		else if (!strcmp(a, "--bps"))
			o.bps = rig_number(v, a, 1ull << 40);
		else if (!strcmp(a, "--iops"))
			o.iops = rig_number(v, a, 1000000);
		else if (!strcmp(a, "--bulk"))
			o.bulk = (unsigned)rig_number(v, a, WRITERS_MAX / 2);
		else if (!strcmp(a, "--small"))
			o.small = (unsigned)rig_number(v, a, WRITERS_MAX / 2);
		else if (!strcmp(a, "--queue-depth"))
			o.queue_depth = (unsigned)rig_number(v, a, 1024);
		else if (!strcmp(a, "--policies"))
			snprintf(o.policies, sizeof(o.policies), "%s", v);
		else if (!strcmp(a, "--dir"))
			o.dir = v;
		else {
			usage(stderr);
			return 2;
		}
	}
	o.bulk_bytes = quick ? 4 * MiB : 16 * MiB * o.size;
	o.records = quick ? 10 : 40ull * o.size;
	for (char *p = strtok(o.policies, ","); p; p = strtok(NULL, ",")) {
		if (nmodes == MODES_MAX) {
			fprintf(stderr, "bench_hdd: at most %d policies\n", MODES_MAX - 1);
			return 2;
		}
		if (!policy_find(p)) {
			fprintf(stderr, "bench_hdd: --policies: unknown policy '%s'\n", p);
			return 2;
		}
		modes[nmodes++] = (struct mode){ .name = p, .daemon = true };
	}
	if (geteuid() != 0) {
		printf("bench_hdd: skipped: needs root (loop devices, mounts, the blkio cgroup)\n");
		return 77;
	}
	setup(&o);
	for (unsigned r = 0; r < o.rounds; r++)
		for (unsigned k = 0; k < nmodes; k++)
			run_mode(&o, &modes[(k + r) % nmodes], r);
	print_results(&o, modes, nmodes);
	rig_cleanup();
	for (unsigned k = 0; k < nmodes; k++) {
		struct samples *all[] = { &modes[k].makespan, &modes[k].bulk_done_mean, &modes[k].bulk_done_max,
					  &modes[k].small_done_mean, &modes[k].small_done_max, &modes[k].bulk_lat,
					  &modes[k].small_lat, &modes[k].d_commands, &modes[k].d_requests,
					  &modes[k].d_expedited, &modes[k].d_latency_ms };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			free(all[i]->v);
	}
	return 0;
}
