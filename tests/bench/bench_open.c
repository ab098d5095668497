/* SPDX-License-Identifier: MIT */
/*
 * bench_open.c - what an annotated open costs, side by side with the plain
 * call in one run (docs/design.md §5.4, §5.5).  Prints one JSON object.
 *
 *   create_plain_us      open(O_CREAT) + close of a new file on the
 *                        origin tmpfs
 *   create_redirect_us   iosig_open of a new file that is redirected: the
 *                        decision (cached signature, selection), the data
 *                        file on the target tmpfs and the link on the origin
 *   create_extra_us      the difference (target: <= 20 us)
 *   create_direct_us     iosig_open where the origin is the chosen mount
 *   create_disabled_us   iosig_open with IOSIG_DISABLE=1 (pass-through)
 *   open_existing_*      opening an existing file plainly / annotated (O_CREAT)
 *   open_read_*          the same without O_CREAT (an annotated open that creates
 *                        nothing still looks whether the path is a link)
 *   open_link_*          opening an existing redirected file (the runtime's
 *                        link) plainly (following it) / annotated (the link,
 *                        its data directory and data file checked, the data
 *                        opened through the directory: rd_link_check)
 *   tag_lookup_ns        tag_lookup() of an untagged and a tagged descriptor
 *   tag_get_ns           tag_get() copying a tag out
 *   first_call_us        the first annotated create (builds the catalog)
 *
 * As root it mounts two tmpfs (origin and target) under a scratch
 * directory, in a private mount namespace; otherwise the origin is the current directory's filesystem
 * and the target /dev/shm, and "origin_fstype" says so.  Every figure is
 * the median over BATCHES batches of the per-call mean of a batch; files
 * are removed between batches, outside the timed region.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bench.h"
#include "declog.h"
#include "iosig.h"
#include "json.h"
#include "mounts.h"
#include "redirect.h"
#include "runtime.h"
#include "tag.h"

#define BATCHES 31
#define CALLS 200

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static const struct iosig_site site_tmp = { IOSIG_SITE_ABI, 1, "tmp random_access size_per_io($0)",
					    __FILE__, __LINE__, 1, "open" };
static const struct iosig_site site_persist = { IOSIG_SITE_ABI, 1,
						"persist sequential_access size_per_io($0)",
						__FILE__, __LINE__, 1, "open" };

static char base[256], origin[1024], target[1024], cfg[512];
static bool mounted;

/* Removes the files of one batch (and the data files behind links). */
static void clean(const char *dir, const char *prefix)
{
	char p[PATH_MAX + 64], data[PATH_MAX];

	for (int i = 0; i < CALLS; i++) {
		ssize_t n;

		snprintf(p, sizeof(p), "%s/%s-%d", dir, prefix, i);
		n = readlink(p, data, sizeof(data) - 1);
		if (n > 0) {
			data[n] = '\0';
			unlink(data);
		}
		unlink(p);
	}
}

enum kind { K_PLAIN, K_REDIRECT, K_DIRECT, K_DISABLED, K_EXIST_PLAIN, K_EXIST_IOSIG,
	    K_READ_PLAIN, K_READ_IOSIG, K_LINK_PLAIN, K_LINK_IOSIG };

/* Median per-call seconds of CALLS opens of `kind` in `dir`. */
static double measure(enum kind kind, const char *dir)
{
	double samples[BATCHES];
	char p[PATH_MAX + 64];

	for (int b = 0; b < BATCHES; b++) {
		char names[CALLS][64];
		double t0, t1;

		for (int i = 0; i < CALLS; i++) {
			snprintf(names[i], sizeof(names[i]), "f-%d", i);
			snprintf(p, sizeof(p), "%s/%.63s", dir, names[i]);
			if (kind == K_EXIST_PLAIN || kind == K_EXIST_IOSIG || kind == K_READ_PLAIN ||
			    kind == K_READ_IOSIG)
				close(open(p, O_CREAT | O_WRONLY, 0644));
			if (kind == K_LINK_PLAIN || kind == K_LINK_IOSIG)
				close(iosig_open(&site_tmp, p, O_CREAT | O_WRONLY, 0644, 4096.0));
		}
		if (chdir(dir))
			return -1;
		t0 = bench_now();
		for (int i = 0; i < CALLS; i++) {
			int fd;

			switch (kind) {
			case K_PLAIN:
				fd = open(names[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
				break;
			case K_EXIST_PLAIN:
				fd = open(names[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
				break;
			case K_READ_PLAIN:
			case K_LINK_PLAIN:
				fd = open(names[i], O_WRONLY | O_CLOEXEC);
				break;
			case K_READ_IOSIG:
			case K_LINK_IOSIG:
				fd = iosig_open(&site_tmp, names[i], O_WRONLY | O_CLOEXEC, 0, 4096.0);
				break;
			case K_DIRECT:
				fd = iosig_open(&site_persist, names[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0644,
						65536.0);
				break;
			default:
				fd = iosig_open(&site_tmp, names[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0644,
						4096.0);
				break;
			}
			if (fd < 0) {
				fprintf(stderr, "bench_open: open %s/%s: %s\n", dir, names[i], strerror(errno));
				exit(1);
			}
			close(fd);
		}
		t1 = bench_now();
		samples[b] = (t1 - t0) / CALLS;
		clean(dir, "f");
	}
	return bench_median(samples, BATCHES);
}

/* ns per tag_lookup / tag_get of fd. */
static double measure_tag(int fd, bool get)
{
	static struct tag_info info;
	double samples[BATCHES];
	volatile long hits = 0;

	for (int b = 0; b < BATCHES; b++) {
		double t0 = bench_now();

		for (int i = 0; i < 100000; i++)
			hits += get ? tag_get(fd, 0, &info) == 0 : tag_lookup(fd);
		samples[b] = (bench_now() - t0) / 100000;
	}
	(void)hits;
	return bench_median(samples, BATCHES) * 1e9;
}

static const char *setup(void)
{
	static char why[256];
	struct statfs sf;
	char cwd[900];
	FILE *fp;

	snprintf(base, sizeof(base), "/tmp/iosig-bench-open.XXXXXX");
	if (!mkdtemp(base))
		return "cannot create a scratch directory in /tmp";
	if (!tmnt_unavailable(false) && tmnt_private() == 0) {
		snprintf(origin, sizeof(origin), "%s/origin", base);
		snprintf(target, sizeof(target), "%s/target", base);
		mounted = tmnt_mount("iosig-bench", origin, "tmpfs", 0, "size=2g") == 0 &&
			  tmnt_mount("iosig-bench", target, "tmpfs", 0, "size=2g") == 0;
		if (!mounted)
			tmnt_umount_all();
	}
	if (!mounted) {
		if (!getcwd(cwd, sizeof(cwd)))
			return "no working directory";
		snprintf(origin, sizeof(origin), "%s/bench-open-origin.%d", cwd, (int)getpid());
		mkdir(origin, 0755);
		if (statfs("/dev/shm", &sf) || sf.f_type != TMPFS_MAGIC)
			return "not root and no /dev/shm tmpfs to redirect to";
		snprintf(target, sizeof(target), "/dev/shm");
	}
	snprintf(cfg, sizeof(cfg), "%s/config.yaml", base);
	fp = fopen(cfg, "w");
	if (!fp)
		return "cannot write the configuration";
	/* Only the two mounts; every other one is left out. */
	fprintf(fp, "version: 1\nmounts:\n");
	{
		char pat[64] = "";

		for (int d = 1; d <= 12; d++) {
			strcat(pat, "/*");
			fprintf(fp, "  \"%s\": { ignore: true }\n", pat);
		}
	}
	{
		char omnt[PATH_MAX];
		struct stat a, b;

		/* The origin's mount point: walk up while st_dev stays. */
		snprintf(omnt, sizeof(omnt), "%s", origin);
		while (strcmp(omnt, "/")) {
			char *slash = strrchr(omnt, '/');
			char parent[PATH_MAX];

			snprintf(parent, sizeof(parent), "%.*s", slash == omnt ? 1 : (int)(slash - omnt), omnt);
			if (stat(omnt, &a) || stat(parent, &b) || a.st_dev != b.st_dev)
				break;
			snprintf(omnt, sizeof(omnt), "%s", parent);
		}
		if (strcmp(omnt, "/"))
			fprintf(fp, "  \"/\": { ignore: true }\n");
		fprintf(fp, "  \"%s\": { ignore: false, class: hdd, volatile: false, data_dir: \"%s/.iosig-data\" }\n",
			omnt, origin);
		fprintf(fp, "  \"%s\": { ignore: false, class: ram, volatile: true, data_dir: \"%s/iosig-bench-%d\" }\n",
			target, target, (int)getpid());
	}
	if (fclose(fp))
		return "cannot write the configuration";
	setenv("IOSIG_CONFIG", cfg, 1);
	unsetenv("IOSIG_LOG");
	unsetenv("IOSIG_DISABLE");
	unsetenv("IOSIG_DRYRUN");
	unsetenv("IOSIG_STRICT");
	rt_env_reload();
	declog_reset();
	snprintf(why, sizeof(why), "ok");
	return NULL;
}

static void teardown(void)
{
	char p[PATH_MAX + 64];

	if (chdir("/"))
		return;
	rd_reset();   /* closes the cached data-directory descriptors */
	if (mounted) {
		tmnt_umount_all();
	} else {
		snprintf(p, sizeof(p), "%s/iosig-bench-%d", target, (int)getpid());
		rmdir(p);
		snprintf(p, sizeof(p), "%s/.iosig-data", origin);
		rmdir(p);
		rmdir(origin);
	}
	tmnt_sh("rm -rf '%s'", base);
}

int main(void)
{
	double first, plain, redirect, direct, disabled, ex_plain, ex_iosig, rd_plain, rd_iosig;
	double ln_plain, ln_iosig;
	double lk_un, lk_tag, get;
	const char *why = setup();
	struct json_writer w;
	struct statfs sf;
	char p[PATH_MAX + 64];
	int fd, fd_tag;

	json_init(&w, stdout, true);
	json_obj_begin(&w, NULL);
	json_str(&w, "bench", "open");
	if (why) {
		json_str(&w, "skipped", why);
		json_obj_end(&w);
		json_finish(&w);
		teardown();
		return 0;
	}
	/* The first annotated create builds the catalog. */
	snprintf(p, sizeof(p), "%s/first", origin);
	{
		double t0 = bench_now();

		fd = iosig_open(&site_tmp, p, O_CREAT | O_WRONLY, 0644, 4096.0);
		first = bench_now() - t0;
	}
	if (fd < 0) {
		fprintf(stderr, "bench_open: first open: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	{
		char data[PATH_MAX];

		if (readlink(p, data, sizeof(data)) < 0) {
			fprintf(stderr, "bench_open: the first open was not redirected; see IOSIG_LOG=stderr\n");
			return 1;
		}
	}

	plain = measure(K_PLAIN, origin);
	redirect = measure(K_REDIRECT, origin);
	direct = measure(K_DIRECT, origin);
	ex_plain = measure(K_EXIST_PLAIN, origin);
	ex_iosig = measure(K_EXIST_IOSIG, origin);
	rd_plain = measure(K_READ_PLAIN, origin);
	rd_iosig = measure(K_READ_IOSIG, origin);
	ln_plain = measure(K_LINK_PLAIN, origin);
	ln_iosig = measure(K_LINK_IOSIG, origin);
	setenv("IOSIG_DISABLE", "1", 1);
	rt_env_reload();
	declog_reset();
	disabled = measure(K_DISABLED, origin);
	unsetenv("IOSIG_DISABLE");
	rt_env_reload();
	declog_reset();

	fd = open("/dev/null", O_RDONLY);
	snprintf(p, sizeof(p), "%s/tagged", origin);
	fd_tag = iosig_open(&site_tmp, p, O_CREAT | O_RDWR, 0644, 4096.0);
	tag_clear(fd);
	lk_un = measure_tag(fd, false);
	lk_tag = measure_tag(fd_tag, false);
	get = measure_tag(fd_tag, true);
	close(fd);
	close(fd_tag);

	statfs(origin, &sf);
	json_str(&w, "origin_fstype", sf.f_type == TMPFS_MAGIC ? "tmpfs" : "other");
	json_str(&w, "target", mounted ? "tmpfs (scratch mount)" : "/dev/shm");
	json_int(&w, "batches", BATCHES);
	json_int(&w, "calls_per_batch", CALLS);
	json_num(&w, "first_call_us", first * 1e6);
	json_num(&w, "create_plain_us", plain * 1e6);
	json_num(&w, "create_redirect_us", redirect * 1e6);
	json_num(&w, "create_extra_us", (redirect - plain) * 1e6);
	json_num(&w, "create_extra_target_us", 20);
	json_num(&w, "create_direct_us", direct * 1e6);
	json_num(&w, "create_disabled_us", disabled * 1e6);
	json_num(&w, "disabled_extra_us", (disabled - plain) * 1e6);
	json_num(&w, "open_existing_plain_us", ex_plain * 1e6);
	json_num(&w, "open_existing_iosig_us", ex_iosig * 1e6);
	json_num(&w, "open_read_plain_us", rd_plain * 1e6);
	json_num(&w, "open_read_iosig_us", rd_iosig * 1e6);
	json_num(&w, "open_link_plain_us", ln_plain * 1e6);
	json_num(&w, "open_link_iosig_us", ln_iosig * 1e6);
	json_num(&w, "tag_lookup_untagged_ns", lk_un);
	json_num(&w, "tag_lookup_tagged_ns", lk_tag);
	json_num(&w, "tag_get_ns", get);
	json_obj_end(&w);
	json_finish(&w);
	teardown();
	return 0;
}
