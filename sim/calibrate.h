/* SPDX-License-Identifier: MIT */
/*
 * calibrate.h - replays a DiskSim validation trace (a real drive's
 * requests with their measured service times) through the HDD model
 * configured from the drive's DiskSim parameter files, and compares the
 * predicted with the measured service times (docs/calibration.md).
 */
#ifndef IOSIG_SIM_CALIBRATE_H
#define IOSIG_SIM_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hdd.h"

/* Targets of issue 7, item 3. */
#define SIM_CALIB_MAX_MEAN_ERR_PCT 10.0
#define SIM_CALIB_MAX_DEMERIT_PCT 15.0

struct sim_calib_class {
	uint64_t n;
	double meas_mean_ms, pred_mean_ms;
};

struct sim_calib_result {
	char drive[64];
	uint64_t n;                     /* requests replayed */
	double meas_mean_ms;            /* mean measured service time */
	double pred_mean_ms;            /* mean predicted service time */
	double mean_err_pct;            /* (pred - meas) / meas * 100 */
	double demerit_ms;              /* RMS horizontal distance between the CDFs */
	double demerit_pct;             /* demerit / meas_mean * 100 */
	struct sim_calib_class read, write;
	struct sim_hdd_stats stats;     /* the model's counters after the replay */
};

/*
 * Loads DIR/DRIVE.{parv,diskspecs,model,seek} and replays DIR/DRIVE.trace
 * (validate format, closed loop).  With cdf, writes "p measured_ms
 * predicted_ms" quantile lines (for plots).  0 or -errno with a message.
 */
int sim_calibrate(const char *dir, const char *drive, struct sim_calib_result *ret, FILE *cdf,
		  char *err, size_t errlen);
/* Same with the parameters given (tests, experiments). */
int sim_calibrate_params(const struct sim_hdd_params *p, const char *trace_path,
			 struct sim_calib_result *ret, FILE *cdf, char *err, size_t errlen);
/* RMS horizontal distance between the empirical CDFs of a and b, sampled
 * like DiskSim's rms tool at p = 0.0001, 0.0002, ... 1 (nearest rank);
 * both arrays are sorted in place. */
double sim_demerit(double *a, size_t na, double *b, size_t nb);

#endif /* IOSIG_SIM_CALIBRATE_H */
