/* SPDX-License-Identifier: MIT */
/*
 * trace_mqsim.c - MQSim's ASCII trace format (CMU SAFARI):
 *   arrival_ns device lba_sectors size_sectors type
 * type 0 = write, 1 = read; 512-byte sectors.
 */
#include <errno.h>
#include <string.h>

#include "trace.h"

static int parse_mqsim(struct sim_trace *t, struct sim_io *ret)
{
	uint64_t time_ns, dev, lba, size, type;

	if (t->nfield != 5)
		return sim_trace_error(t, "%u fields, expected 5: arrival_ns device lba_sectors "
				       "size_sectors type", t->nfield);
	if (!sim_parse_u64(t->field[0], &time_ns) || time_ns > (uint64_t)INT64_MAX)
		return sim_trace_error(t, "arrival time '%s' is not a number of nanoseconds",
				       t->field[0]);
	if (!sim_parse_u64(t->field[1], &dev) || dev > UINT32_MAX)
		return sim_trace_error(t, "device '%s' is not a number", t->field[1]);
	if (!sim_parse_u64(t->field[2], &lba) || lba >= (1ull << 54))
		return sim_trace_error(t, "LBA '%s' is not a sector number", t->field[2]);
	if (!sim_parse_u64(t->field[3], &size) || size == 0 || size >= (1ull << 32))
		return sim_trace_error(t, "size '%s' is not a positive number of sectors",
				       t->field[3]);
	if (!sim_parse_u64(t->field[4], &type) || type > 1)
		return sim_trace_error(t, "type '%s' is neither 0 (write) nor 1 (read)", t->field[4]);
	ret->arrival_ns = time_ns;
	ret->dev = (uint32_t)dev;
	ret->offset = lba * SIM_SECTOR;
	ret->len = size * SIM_SECTOR;
	ret->op = type ? POLICY_OP_READ : POLICY_OP_WRITE;
	ret->flags = type ? POLICY_REQ_SYNC : 0;
	return 1;
}

const struct sim_trace_format sim_trace_fmt_mqsim = {
	.name = "mqsim",
	.summary = "MQSim: arrival_ns device lba_sectors size_sectors type (0 write, 1 read)",
	.parse = parse_mqsim,
};
