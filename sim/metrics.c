/* SPDX-License-Identifier: MIT */
/* metrics.c - per-request measurements of a run (see metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <string.h>

#include "source.h"

static const char *const class_names[SIM_SIZE_CLASSES] = {
	"lt4KiB", "4KiB-16KiB", "16KiB-64KiB", "64KiB-256KiB", "256KiB-1MiB", "ge1MiB",
};

unsigned sim_size_class(uint64_t len)
{
	unsigned c = 0;

	for (uint64_t lim = 4096; c < SIM_SIZE_CLASSES - 1 && len >= lim; lim *= 4)
		c++;
	return c;
}

const char *sim_size_class_name(unsigned cls)
{
	return cls < SIM_SIZE_CLASSES ? class_names[cls] : "?";
}

void sim_metrics_init(struct sim_metrics *m)
{
	*m = (struct sim_metrics){ .first_arrival_ns = UINT64_MAX,
				   .first_arrival_op = { UINT64_MAX, UINT64_MAX } };
	pol_hist_init(&m->lat);
	for (int o = 0; o < 2; o++) {
		pol_hist_init(&m->lat_op[o]);
		for (int c = 0; c < SIM_SIZE_CLASSES; c++)
			pol_hist_init(&m->lat_cls[o][c]);
	}
}

void sim_metrics_free(struct sim_metrics *m)
{
	if (!m)
		return;
	pol_hist_free(&m->lat);
	for (int o = 0; o < 2; o++) {
		pol_hist_free(&m->lat_op[o]);
		for (int c = 0; c < SIM_SIZE_CLASSES; c++)
			pol_hist_free(&m->lat_cls[o][c]);
	}
}

int sim_metrics_add(struct sim_metrics *m, int op, uint64_t len, uint64_t arrival_ns,
		    uint64_t done_ns, int status)
{
	uint64_t lat = done_ns > arrival_ns ? done_ns - arrival_ns : 0;
	int r;

	m->completed++;
	if (arrival_ns < m->first_arrival_ns)
		m->first_arrival_ns = arrival_ns;
	if (done_ns > m->last_completion_ns)
		m->last_completion_ns = done_ns;
	m->latency_sum_ns += (double)lat;
	if (status) {
		if (!m->errors++) {
			m->first_error = status;
			m->first_error_ns = done_ns;
		}
		return 0;
	}
	if (op == POLICY_OP_FLUSH) {
		m->flushes++;
		return 0;
	}
	if (arrival_ns < m->first_arrival_op[op])
		m->first_arrival_op[op] = arrival_ns;
	if (done_ns > m->last_completion_op[op])
		m->last_completion_op[op] = done_ns;
	if (op == POLICY_OP_READ) {
		m->reads++;
		m->bytes_read += len;
	} else {
		m->writes++;
		m->bytes_written += len;
	}
	if ((r = pol_hist_add(&m->lat, lat)) < 0 || (r = pol_hist_add(&m->lat_op[op], lat)) < 0 ||
	    (r = pol_hist_add(&m->lat_cls[op][sim_size_class(len)], lat)) < 0)
		return r;
	return 0;
}

void pol_hist_json(const struct pol_hist *h, const char *key, struct json_writer *w)
{
	json_obj_begin(w, key);
	json_uint(w, "count", h->count);
	json_num(w, "mean_us", pol_hist_mean(h) / 1e3);
	json_num(w, "p50_us", pol_hist_percentile(h, 50) / 1e3);
	json_num(w, "p99_us", pol_hist_percentile(h, 99) / 1e3);
	json_num(w, "p999_us", pol_hist_percentile(h, 99.9) / 1e3);
	json_num(w, "max_us", h->count ? (double)h->max / 1e3 : 0);
	json_obj_end(w);
}

void sim_metrics_json(const struct sim_metrics *m, double device_time_s, struct json_writer *w)
{
	bool any = m->completed > 0;
	double span = any ? (double)(m->last_completion_ns - m->first_arrival_ns) / 1e9 : 0;

	json_obj_begin(w, "requests");
	json_uint(w, "completed", m->completed);
	json_uint(w, "errors", m->errors);
	if (m->errors) {
		json_str(w, "first_error", strerror(-m->first_error));
		json_num(w, "first_error_s", (double)m->first_error_ns / 1e9);
	}
	json_uint(w, "reads", m->reads);
	json_uint(w, "writes", m->writes);
	json_uint(w, "flushes", m->flushes);
	json_uint(w, "bytes_read", m->bytes_read);
	json_uint(w, "bytes_written", m->bytes_written);
	json_obj_end(w);

	json_obj_begin(w, "time");
	json_num(w, "first_arrival_s", any ? (double)m->first_arrival_ns / 1e9 : 0);
	json_num(w, "last_completion_s", (double)m->last_completion_ns / 1e9);
	json_num(w, "makespan_s", span);
	json_num(w, "cumulative_io_completion_s", device_time_s);
	json_num(w, "latency_sum_s", m->latency_sum_ns / 1e9);
	json_num(w, "throughput_mib_s",
		 span > 0 ? (double)(m->bytes_read + m->bytes_written) / span / (1 << 20) : 0);
	/* Per op, over the span from its first arrival to its last completion. */
	for (int o = 0; o < 2; o++) {
		uint64_t a = m->first_arrival_op[o], b = m->last_completion_op[o];
		double bytes = (double)(o ? m->bytes_written : m->bytes_read);

		json_num(w, o ? "write_throughput_mib_s" : "read_throughput_mib_s",
			 a != UINT64_MAX && b > a ? bytes / ((double)(b - a) / 1e9) / (1 << 20) : 0);
	}
	json_obj_end(w);

	json_obj_begin(w, "latency");
	pol_hist_json(&m->lat, "all", w);
	pol_hist_json(&m->lat_op[0], "read", w);
	pol_hist_json(&m->lat_op[1], "write", w);
	json_arr_begin(w, "by_size");
	for (unsigned c = 0; c < SIM_SIZE_CLASSES; c++) {
		json_obj_begin(w, NULL);
		json_str(w, "class", class_names[c]);
		pol_hist_json(&m->lat_cls[0][c], "read", w);
		pol_hist_json(&m->lat_cls[1][c], "write", w);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}
