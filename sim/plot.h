/* SPDX-License-Identifier: MIT */
/*
 * plot.h - --plot DIR: data files written while the simulation runs (with
 * thinning, so their size stays bounded), a gnuplot script, and PNGs when
 * gnuplot is installed (Debian package gnuplot-nox).
 */
#ifndef IOSIG_SIM_PLOT_H
#define IOSIG_SIM_PLOT_H

#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "pol_hist.h"

#define SIM_PLOT_MAX_POINTS 20000   /* per series, approximately */

struct sim_plot;

/* Creates DIR (and parents) and opens the series files.  0 or -errno. */
int sim_plot_open(const char *dir, struct sim_dev **devs, unsigned ndev, struct sim_plot **ret,
		  char *err, size_t errlen);
/* Engine observer: one finished workload request. */
void sim_plot_complete(struct sim_plot *p, const struct policy_req *req, uint64_t done_ns);
/* Writes the latency CDFs and the gnuplot script, runs gnuplot if found.
 * 0 or -errno; *ret_ran says whether PNGs were made. */
int sim_plot_finish(struct sim_plot *p, const struct sim_metrics *m, bool *ret_ran, char *err,
		    size_t errlen);
void sim_plot_close(struct sim_plot *p);

/* Calibration plot: cdf holds "p measured_ms predicted_ms" lines already;
 * writes DIR/calibration_<drive>.gp and runs gnuplot. */
int sim_plot_calibration(const char *dir, const char *drive, bool *ret_ran, char *err,
			 size_t errlen);
/* Makes dir and its parents (mode 0755).  0 or -errno. */
int sim_mkdirs(const char *dir);

#endif /* IOSIG_SIM_PLOT_H */
