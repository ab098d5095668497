/* SPDX-License-Identifier: MIT */
/*
 * bench_daemon.c - what the daemon's data path costs, side by side in one
 * run on one mount (docs/daemon.md), as JSON:
 *
 *   write        sequential write() of 4 KiB, 64 KiB and 1 MiB calls to a
 *                plain and to a tagged file: bandwidth until the calls
 *                return and until durable (an fsync at the end), and the
 *                tagged/plain ratios (the medians of --rounds rounds,
 *                default 7, plain and tagged alternating);
 *   latency_4k   per-call latency of 4 KiB writes, p50 and p99;
 *   fsync        p50 of fsync after a 64 KiB write, and the ratio;
 *   daemon_cpu   iosigd's CPU seconds per GiB of tagged writes;
 *   untagged     ns per call of an interposed call (lseek) on an untagged
 *                descriptor: plain, with libiosig.so linked, and under the
 *                iosig-redirect preload with a rule that matches nothing.
 *
 * As root it makes an ext4 loop mount in a private mount namespace (gone
 * with the process); otherwise, or with --dir DIR, it uses DIR.  It starts
 * its own iosigd (foreground, private socket; it dies with this program).
 *   bench_daemon [--dir DIR] [--quick]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bench_iosigd.h"
#include "json.h"
#include "mounts.h"

static char work[4096];
static struct bench_iosigd iosigd = { .pid = -1 };

/* Runs a command with the daemon in its environment; its JSON line. */
static int run_json(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int run_json(char *out, size_t size, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	FILE *fp;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fp = popen(cmd, "r");
	if (!fp)
		return -1;
	n = fread(out, 1, size - 1, fp);
	out[n] = '\0';
	return pclose(fp) == 0 && n ? 0 : -1;
}

static double field(const char *json, const char *key)
{
	char k[128];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(json, k);
	return p ? atof(p + strlen(k)) : -1;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	bool quick = false, mounted = false;
	unsigned rounds = 7;
	static const size_t sizes[] = { 4096, 65536, 1 << 20 };
	char out[4096], env[9000];
	double cpu0, cpu1, tagged_bytes = 0;
	struct json_writer w;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			rounds = (unsigned)atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_daemon [--dir DIR] [--quick] [--rounds N]\n"
				"  --rounds N  write rounds per size, plain and tagged alternating; the\n"
				"              median of each (default 7)\n");
			return 2;
		}
	}
	snprintf(work, sizeof(work), "/var/tmp/iosig-bench-daemon.XXXXXX");
	if (!mkdtemp(work))
		return 1;
	if (!dir && !tmnt_unavailable(true) && tmnt_private() == 0) {
		char img[4200], mnt[4200];

		snprintf(img, sizeof(img), "%s/ext4.img", work);
		snprintf(mnt, sizeof(mnt), "%s/mnt", work);
		if (tmnt_mkfs(img, 3ull << 30, "ext4", "-q -F") == 0 &&
		    tmnt_loop_mount(img, 0, mnt, "ext4", 0, NULL, NULL, 0) == 0) {
			static char mntbuf[4200];

			snprintf(mntbuf, sizeof(mntbuf), "%s", mnt);
			dir = mntbuf;
			mounted = true;
		}
	}
	if (!dir)
		dir = work;
	if (bench_iosigd_init(&iosigd, work, "iosigd") < 0)
		return 1;
	if (bench_iosigd_config(iosigd.cfg, dir, "ssd", "noop", 0, NULL, NULL) < 0)
		return 1;
	if (bench_iosigd_start(&iosigd, IOSIGD, NULL, NULL, NULL) < 0) {
		fprintf(stderr, "bench_daemon: cannot start %s\n", IOSIGD);
		return 1;
	}
	snprintf(env, sizeof(env), "IOSIG_DAEMON_SOCKET='%s' IOSIG_CONFIG='%s'", iosigd.sock, iosigd.cfg);

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "bench", "daemon");
	json_str(&w, "dir", dir);
	json_str(&w, "fs", mounted ? "ext4 (loop)" : "as found");
	json_str(&w, "policy", "noop");
	json_num(&w, "rounds", quick ? 3 : rounds);
	json_arr_begin(&w, "write");
	cpu0 = bench_iosigd_cpu(&iosigd);
	for (unsigned i = 0; i < 3; i++) {
		size_t total = (quick ? 16u : sizes[i] == 4096 ? 64u : 256u) << 20;

		if (run_json(out, sizeof(out), "%s %s write '%s' %zu %zu %u", env, DAEMON_IO, dir, sizes[i],
			     total, quick ? 3 : rounds) < 0) {
			fprintf(stderr, "bench_daemon: write %zu failed\n", sizes[i]);
			bench_iosigd_stop(&iosigd);
			return 1;
		}
		tagged_bytes += (double)(quick ? 3 : rounds) * (double)total;
		json_obj_begin(&w, NULL);
		json_uint(&w, "size", sizes[i]);
		json_num(&w, "plain_MBps", (double)total / 1e6 / field(out, "plain_return_s"));
		json_num(&w, "tagged_MBps", (double)total / 1e6 / field(out, "tagged_return_s"));
		json_num(&w, "ratio", field(out, "plain_return_s") / field(out, "tagged_return_s"));
		json_num(&w, "plain_durable_MBps", (double)total / 1e6 / field(out, "plain_durable_s"));
		json_num(&w, "tagged_durable_MBps", (double)total / 1e6 / field(out, "tagged_durable_s"));
		json_num(&w, "durable_ratio", field(out, "plain_durable_s") / field(out, "tagged_durable_s"));
		json_obj_end(&w);
	}
	cpu1 = bench_iosigd_cpu(&iosigd);
	json_arr_end(&w);
	json_num(&w, "daemon_cpu_s_per_GiB", (cpu1 - cpu0) / (tagged_bytes / (1u << 30)));
	if (run_json(out, sizeof(out), "%s %s latency '%s' %u", env, DAEMON_IO, dir, quick ? 2000 : 20000) == 0) {
		json_obj_begin(&w, "latency_4k");
		json_num(&w, "plain_p50_us", field(out, "plain_p50_us"));
		json_num(&w, "tagged_p50_us", field(out, "tagged_p50_us"));
		json_num(&w, "plain_p99_us", field(out, "plain_p99_us"));
		json_num(&w, "tagged_p99_us", field(out, "tagged_p99_us"));
		json_num(&w, "p50_over_plain_us", field(out, "tagged_p50_us") - field(out, "plain_p50_us"));
		json_obj_end(&w);
	}
	if (run_json(out, sizeof(out), "%s %s fsync '%s' %u", env, DAEMON_IO, dir, quick ? 20 : 200) == 0) {
		json_obj_begin(&w, "fsync");
		json_num(&w, "plain_p50_us", field(out, "plain_fsync_p50_us"));
		json_num(&w, "tagged_p50_us", field(out, "tagged_fsync_p50_us"));
		json_num(&w, "tagged_over_plain", field(out, "tagged_fsync_p50_us") / field(out, "plain_fsync_p50_us"));
		json_obj_end(&w);
	}
	bench_iosigd_stop(&iosigd);
	{
		/* Untagged: what each way of interposing adds over libc's own
		 * call, measured inside each process (plain: the control). */
		static const char *const names[3] = { "plain", "libiosig_linked", "preload" };
		unsigned n = quick ? 2000 : 20000;
		double over[3][5], direct = 0;

		for (int r = 0; r < 5; r++) {
			for (int k = 0; k < 3; k++) {
				int rr = k == 0 ? run_json(out, sizeof(out), "%s untagged %u", DAEMON_IO_PLAIN, n) :
					 k == 1 ? run_json(out, sizeof(out), "IOSIG_DAEMON_SOCKET= %s untagged %u",
							   DAEMON_IO, n) :
						  run_json(out, sizeof(out),
							   "%s -q -s tmp /nonexistent/nothing -- %s untagged %u",
							   IOSIG_REDIRECT, DAEMON_IO_PLAIN, n);

				over[k][r] = rr ? -1 : field(out, "overhead_ns");
				if (!rr && k == 0)
					direct = field(out, "direct_ns");
			}
		}
		json_obj_begin(&w, "untagged");
		json_str(&w, "call", "lseek(fd, 0, SEEK_CUR)");
		json_num(&w, "libc_ns", direct);
		for (int k = 0; k < 3; k++) {
			char key[64];

			snprintf(key, sizeof(key), "%s_over_libc_ns", names[k]);
			json_num(&w, key, bench_median(over[k], 5));
		}
		json_obj_end(&w);
	}
	json_obj_end(&w);
	json_finish(&w);
	if (mounted)
		tmnt_umount_all();
	tmnt_sh("rm -rf '%s'", work);
	return 0;
}
