/* SPDX-License-Identifier: MIT */
/*
 * dev_mem.c - byte-addressable tiers: NVM (persistent memory) and RAM.
 * A command waits for the shared memory channel, holds it for len /
 * bandwidth, and completes one access latency later:
 *   start = max(now, channel free); done = start + len / bw + latency.
 * Defaults: NVM like Optane DC PMM (read 300 ns, write 100 ns into the
 * write-pending queue, 6.6 / 2.3 GB/s); RAM like DDR4 (100 ns, 20 GB/s).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "source.h"

struct mem_opts {
	uint64_t capacity;
	uint64_t read_lat, write_lat;
	uint64_t read_bw, write_bw;
	uint64_t queue_depth;
};

#define MEM_OPTS(cap, rl, wl, rb, wb)                                                         \
	{                                                                                     \
		{ .name = "capacity", .type = POLICY_OPT_SIZE,                                 \
		  .off = offsetof(struct mem_opts, capacity), .def = cap, .min = 1u << 20,    \
		  .max = 1ull << 50, .help = "capacity" },                                    \
		{ .name = "read_latency", .type = POLICY_OPT_TIME,                             \
		  .off = offsetof(struct mem_opts, read_lat), .def = rl, .min = 0,            \
		  .max = POLICY_NS_PER_S, .help = "latency of a read" },                       \
		{ .name = "write_latency", .type = POLICY_OPT_TIME,                            \
		  .off = offsetof(struct mem_opts, write_lat), .def = wl, .min = 0,           \
		  .max = POLICY_NS_PER_S, .help = "latency of a write" },                      \
		{ .name = "read_bw", .type = POLICY_OPT_RATE,                                  \
		  .off = offsetof(struct mem_opts, read_bw), .def = rb, .min = 1u << 20,      \
		  .max = 1ull << 42, .help = "read bandwidth" },                              \
		{ .name = "write_bw", .type = POLICY_OPT_RATE,                                 \
		  .off = offsetof(struct mem_opts, write_bw), .def = wb, .min = 1u << 20,     \
		  .max = 1ull << 42, .help = "write bandwidth" },                             \
		{ .name = "queue_depth", .type = POLICY_OPT_UINT,                              \
		  .off = offsetof(struct mem_opts, queue_depth), .def = "64", .min = 1,       \
		  .max = 65536, .help = "commands in flight" },                               \
		{ .name = NULL },                                                             \
	}

static const struct policy_opt nvm_tab[] = MEM_OPTS("256GiB", "300ns", "100ns", "6600MiB/s",
						    "2300MiB/s");
static const struct policy_opt ram_tab[] = MEM_OPTS("16GiB", "100ns", "100ns", "20GiB/s",
						    "20GiB/s");

const struct sim_dev_class sim_dev_class_nvm = {
	.name = "nvm",
	.summary = "persistent memory: latency + bandwidth",
	.models = "generic",
	.opts = nvm_tab,
	.opts_size = sizeof(struct mem_opts),
};

const struct sim_dev_class sim_dev_class_ram = {
	.name = "ram",
	.summary = "volatile memory tier: latency + bandwidth",
	.models = "generic",
	.opts = ram_tab,
	.opts_size = sizeof(struct mem_opts),
};

struct dev_mem {
	struct sim_dev dev;
	struct mem_opts o;
	double chan_free;
};

static uint64_t mem_serve(struct sim_dev *d, int op, uint64_t offset, uint64_t len, uint64_t now)
{
	struct dev_mem *m = (struct dev_mem *)d;
	double start = (double)now > m->chan_free ? (double)now : m->chan_free;
	bool wr = op == POLICY_OP_WRITE;

	if (op == POLICY_OP_FLUSH)
		return now;
	m->chan_free = start + (double)len * 1e9 / (double)(wr ? m->o.write_bw : m->o.read_bw);
	return (uint64_t)(m->chan_free + (double)(wr ? m->o.write_lat : m->o.read_lat));
}

static void mem_report(struct sim_dev *d, struct json_writer *w)
{
}

static void mem_destroy(struct sim_dev *d)
{
	free(d);
}

static const struct sim_dev_ops mem_ops = {
	.serve = mem_serve,
	.report = mem_report,
	.destroy = mem_destroy,
};

static int mem_create(const struct sim_dev_class *cls, enum iosig_class c, const char *model,
		      const char *optstr, struct sim_dev **ret, char *err, size_t errlen)
{
	struct dev_mem *m;
	int r;

	if (*model && strcmp(model, "generic")) {
		snprintf(err, errlen, "unknown %s model '%s' (known: generic)", cls->name, model);
		return -ENOENT;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = sim_dev_opts(cls, &m->o, optstr, err, errlen);
	if (r < 0) {
		free(m);
		return r;
	}
	m->dev.ops = &mem_ops;
	snprintf(m->dev.model, sizeof(m->dev.model), "generic");
	m->dev.info.cls = c;
	m->dev.info.capacity = m->o.capacity;
	m->dev.info.queue_depth = (uint32_t)m->o.queue_depth;
	m->dev.info.block_size = 1;
	*ret = &m->dev;
	return 0;
}

int sim_dev_nvm_create(const char *model, const char *opts, struct sim_dev **ret, char *err,
		       size_t errlen)
{
	return mem_create(&sim_dev_class_nvm, IOSIG_CLASS_NVM, model, opts, ret, err, errlen);
}

int sim_dev_ram_create(const char *model, const char *opts, struct sim_dev **ret, char *err,
		       size_t errlen)
{
	return mem_create(&sim_dev_class_ram, IOSIG_CLASS_RAM, model, opts, ret, err, errlen);
}
