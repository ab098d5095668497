/* SPDX-License-Identifier: MIT */
/*
 * status.c - the daemon's state as JSON, the answer to a STATUS message:
 * the daemon (pid, uid, version, mode, uptime, socket, configuration), its
 * clients (pid, uid, registered descriptors, queued bytes, ring use) and its devices (policy,
 * queue, requests and bytes done, mean latency, the policy's counters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "iosigd.h"
#include "json.h"
#include "tiers.h"

static void emit(void *ctx, const char *key, double value)
{
	json_num(ctx, key, value);
}

/* Entries the client published that the daemon has not copied out yet
 * (all of them when the producer's tail is corrupt). */
static uint32_t ring_unread(struct dsession *s)
{
	uint32_t n = iosd_ring_pending(&s->ring, s->head);

	return n == UINT32_MAX ? s->ring.nentries : n;
}

char *status_json(struct daemon *d)
{
	struct json_writer w;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		return NULL;
	json_init(&w, fp, false);
	json_obj_begin(&w, NULL);
	json_obj_begin(&w, "daemon");
	json_int(&w, "pid", getpid());
	json_uint(&w, "uid", getuid());
	json_str(&w, "version", iosig_version());
	json_str(&w, "mode", d->mode);
	json_num(&w, "uptime_s", (double)(dnow() - d->start_ns) / 1e9);
	json_str(&w, "socket", d->socket_path);
	json_bool(&w, "socket_activated", d->socket_activated);
	json_str(&w, "config", d->cfg.file[0] ? d->cfg.file : NULL);
	json_bool(&w, "draining", d->draining);
	json_uint(&w, "operations", d->ops_total);
	/* Write-backs (docs/daemon.md "Write-back"): dirty data not yet at a
	 * policy, and write-backs at the policies or the devices. */
	json_obj_begin(&w, "writeback");
	json_uint(&w, "pending", d->wb_npending);
	json_uint(&w, "pending_bytes", d->wb_pending_bytes);
	json_uint(&w, "started", d->wb_ops - d->wb_npending);
	json_uint(&w, "dirty_max", d->wb_dirty_max);
	json_num(&w, "expire_s", (double)d->wb_expire_ns / 1e9);
	json_obj_end(&w);
	json_obj_end(&w);
	json_arr_begin(&w, "clients");
	for (struct policy_list *l = d->sessions.next; l != &d->sessions; l = l->next) {
		struct dsession *s = pol_container_of(l, struct dsession, link);

		/* Connections without a ring (status queries) are no clients. */
		if (!s->version)
			continue;
		json_obj_begin(&w, NULL);
		json_uint(&w, "session", s->id);
		json_int(&w, "pid", s->pid);
		json_uint(&w, "uid", s->uid);
		json_uint(&w, "descriptors", s->nregs);
		json_uint(&w, "queued_bytes", s->queued);
		json_uint(&w, "outstanding", s->outstanding);
		json_uint(&w, "ring_entries", s->ring.nentries);
		json_uint(&w, "ring_bytes", s->ring.data_bytes);
		json_uint(&w, "ring_unread", ring_unread(s));
		json_uint(&w, "operations", s->completed);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_arr_begin(&w, "devices");
	for (struct policy_list *l = d->devs.next; l != &d->devs; l = l->next) {
		struct ddev *dv = pol_container_of(l, struct ddev, link);

		json_obj_begin(&w, NULL);
		json_str(&w, "mount", dv->name);
		json_str(&w, "policy", dv->policy_spec);
		json_bool(&w, "passthrough", dv->passthrough);
		json_uint(&w, "passed_through", dv->passed_through);
		json_uint(&w, "queue_depth", dv->info.queue_depth);
		json_uint(&w, "inflight", dv->inflight);
		json_uint(&w, "requests", dv->requests);
		json_uint(&w, "commands", dv->commands);
		json_uint(&w, "bytes_read", dv->bytes_read);
		json_uint(&w, "bytes_written", dv->bytes_written);
		json_uint(&w, "expedited", dv->expedited);
		json_uint(&w, "writes_home_cached", dv->writes_home_cached);
		json_uint(&w, "writes_direct", dv->writes_direct);
		json_uint(&w, "syncs_covered", dv->syncs_covered);
		json_num(&w, "mean_latency_ms", pol_hist_mean(&dv->lat) / 1e6);
		json_num(&w, "p50_latency_ms", pol_hist_percentile(&dv->lat, 50) / 1e6);
		json_num(&w, "p99_latency_ms", pol_hist_percentile(&dv->lat, 99) / 1e6);
		json_obj_begin(&w, "counters");
		if (dv->pol->ops->report)
			dv->pol->ops->report(dv->pol, emit, &w);
		json_obj_end(&w);
		tiers_status(d, dv, &w);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
	if (json_finish(&w) < 0 || fclose(fp) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
