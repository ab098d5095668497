/* SPDX-License-Identifier: MIT */
/*
 * plot.c - plot data and gnuplot scripts for --plot (see plot.h).  Series
 * are thinned on the fly: a series writes every stride-th point and doubles
 * its stride each time it has written SIM_PLOT_MAX_POINTS / 2 more lines.
 */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hdd.h"

extern char **environ;

struct series {
	FILE *fp;
	uint64_t seen, written, stride;
};

struct arm_ctx {
	struct sim_plot *p;
	unsigned dev;
};

struct sim_plot {
	char *dir;
	struct series done;
	uint64_t completed, bytes;
	struct series arm[SIM_MAX_DEVS];
	struct arm_ctx actx[SIM_MAX_DEVS];
	char devname[SIM_MAX_DEVS][16];
	unsigned ndev;
	bool is_hdd[SIM_MAX_DEVS];
};

int sim_mkdirs(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static FILE *open_in(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	if (!fp)
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
	return fp;
}

/* Whether this point of the series should be written (thinning). */
static bool take(struct series *s)
{
	if (s->seen++ % s->stride)
		return false;
	if (++s->written % (SIM_PLOT_MAX_POINTS / 2) == 0)
		s->stride *= 2;
	return true;
}

static void on_arm(void *ctx, uint64_t t_ns, uint32_t cyl)
{
	struct arm_ctx *a = ctx;
	struct series *s = &a->p->arm[a->dev];

	if (take(s))
		fprintf(s->fp, "%.9f %u\n", t_ns / 1e9, cyl);
}

int sim_plot_open(const char *dir, struct sim_dev **devs, unsigned ndev, struct sim_plot **ret,
		  char *err, size_t errlen)
{
	struct sim_plot *p;
	int r = sim_mkdirs(dir);

	if (r < 0) {
		snprintf(err, errlen, "cannot create plot directory %s: %s", dir, strerror(-r));
		return r;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->dir = strdup(dir))) {
		free(p);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->ndev = ndev;
	p->done.stride = 1;
	p->done.fp = open_in(dir, "completions.dat", err, errlen);
	if (!p->done.fp)
		goto out_close;
	fprintf(p->done.fp, "# time_s completed_requests completed_bytes latency_us\n");
	for (unsigned d = 0; d < ndev; d++) {
		snprintf(p->devname[d], sizeof(p->devname[d]), "%s", devs[d]->name);
		if (!devs[d]->hdd)
			continue;
		char name[64];

		snprintf(name, sizeof(name), "arm_%s.dat", devs[d]->name);
		p->arm[d].stride = 1;
		p->arm[d].fp = open_in(dir, name, err, errlen);
		if (!p->arm[d].fp)
			goto out_close;
		fprintf(p->arm[d].fp, "# time_s cylinder (every arm movement, thinned)\n");
		p->is_hdd[d] = true;
		p->actx[d] = (struct arm_ctx){ .p = p, .dev = d };
		sim_hdd_set_arm_observer(devs[d]->hdd, on_arm, &p->actx[d]);
	}
	*ret = p;
	return 0;

out_close:
	sim_plot_close(p);
	return -EIO;
}

void sim_plot_complete(struct sim_plot *p, const struct policy_req *req, uint64_t done_ns)
{
	p->completed++;
	p->bytes += req->len;
	if (take(&p->done))
		fprintf(p->done.fp, "%.9f %llu %llu %.3f\n", done_ns / 1e9,
			(unsigned long long)p->completed, (unsigned long long)p->bytes,
			(done_ns - req->arrival_ns) / 1e3);
}

/* Runs gnuplot on script in dir; true if it ran and succeeded. */
static bool run_gnuplot(const char *dir, const char *script)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, r;

	/* The child changes directory, not us (glibc >= 2.29). */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, dir);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return false;
	if (waitpid(pid, &status, 0) < 0)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void write_cdf(FILE *fp, const struct pol_hist *h)
{
	if (!h->count)
		return;
	for (unsigned i = 1; i <= 1000; i++)
		fprintf(fp, "%.6f %.3f\n", pol_hist_percentile(h, i / 10.0) / 1e3, i / 1000.0);
	fputs("\n\n", fp);
}

int sim_plot_finish(struct sim_plot *p, const struct sim_metrics *m, bool *ret_ran, char *err,
		    size_t errlen)
{
	FILE *fp = open_in(p->dir, "latency_cdf.dat", err, errlen), *gp;

	if (!fp)
		return -EIO;
	fprintf(fp, "# latency_us cumulative_fraction; block 0 = reads, block 1 = writes\n");
	write_cdf(fp, &m->lat_op[0]);
	if (!m->lat_op[0].count)
		fputs("0 0\n\n\n", fp);
	write_cdf(fp, &m->lat_op[1]);
	fclose(fp);
	fflush(p->done.fp);
	for (unsigned d = 0; d < p->ndev; d++)
		if (p->arm[d].fp)
			fflush(p->arm[d].fp);

	gp = open_in(p->dir, "plot.gp", err, errlen);
	if (!gp)
		return -EIO;
	fprintf(gp, "# gnuplot script written by iosig-sim --plot; run: gnuplot plot.gp\n"
		    "set terminal pngcairo size 900,600 noenhanced\n"
		    "set grid\n"
		    "set output 'latency_cdf.png'\n"
		    "set title 'Request latency CDF'\n"
		    "set logscale x\nset xlabel 'latency (us)'\nset ylabel 'fraction of requests'\n"
		    "set key bottom right\n"
		    "plot 'latency_cdf.dat' index 0 with lines title 'reads', "
		    "'' index 1 with lines title 'writes'\n"
		    "unset logscale x\n"
		    "set output 'completions.png'\n"
		    "set title 'Cumulative completed requests'\n"
		    "set xlabel 'simulated time (s)'\nset ylabel 'requests completed'\n"
		    "plot 'completions.dat' using 1:2 with lines notitle\n");
	for (unsigned d = 0; d < p->ndev; d++)
		if (p->is_hdd[d])
			fprintf(gp, "set output 'arm_%s.png'\n"
				    "set title 'Disk arm position, %s'\n"
				    "set xlabel 'simulated time (s)'\nset ylabel 'cylinder'\n"
				    "plot 'arm_%s.dat' using 1:2 with lines lw 0.5 notitle\n",
				p->devname[d], p->devname[d], p->devname[d]);
	fclose(gp);
	*ret_ran = run_gnuplot(p->dir, "plot.gp");
	return 0;
}

void sim_plot_close(struct sim_plot *p)
{
	if (!p)
		return;
	if (p->done.fp)
		fclose(p->done.fp);
	for (unsigned d = 0; d < SIM_MAX_DEVS; d++)
		if (p->arm[d].fp)
			fclose(p->arm[d].fp);
	free(p->dir);
	free(p);
}

int sim_plot_calibration(const char *dir, const char *drive, bool *ret_ran, char *err,
			 size_t errlen)
{
	char name[128];
	FILE *gp;

	snprintf(name, sizeof(name), "calibration_%s.gp", drive);
	gp = open_in(dir, name, err, errlen);
	if (!gp)
		return -EIO;
	fprintf(gp, "# gnuplot script written by iosig-sim calibrate --plot\n"
		    "set terminal pngcairo size 900,600 noenhanced\n"
		    "set output 'calibration_%s.png'\n"
		    "set title 'Service time CDF, %s: measured vs model'\n"
		    "set grid\nset key bottom right\n"
		    "set xlabel 'service time (ms)'\nset ylabel 'fraction of requests'\n"
		    "plot 'calibration_%s.dat' using 2:1 with lines title 'measured', "
		    "'' using 3:1 with lines title 'model'\n", drive, drive, drive);
	fclose(gp);
	*ret_ran = run_gnuplot(dir, name);
	return 0;
}
