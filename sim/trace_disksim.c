/* SPDX-License-Identifier: MIT */
/*
 * trace_disksim.c - the two DiskSim text trace formats.
 *
 * ASCII ("disksim"): one request per line,
 *   arrival_ms devno blkno bcount flags
 * arrival in milliseconds (decimal), 512-byte blocks, flags bit 0 set =
 * read (DiskSim's READ flag); other flag bits are ignored.
 *
 * Validate ("validate"): the DiskSim validation traces of real drives,
 *   R|W Hit|Miss|Doub|Trip blkno blocks service_us next_interarrival_us
 * with the drive's measured service time.  As in DiskSim, the trace is a
 * closed loop: the next request arrives next_interarrival_us after this
 * one *completes*.  The buffer action (Hit, Miss, Doub, Trip) is what the
 * real drive reported and is checked but not used.
 */
#include <errno.h>
#include <string.h>

#include "trace.h"

static int parse_ascii(struct sim_trace *t, struct sim_io *ret)
{
	uint64_t time_ns, devno, blkno, bcount, flags;

	if (t->nfield != 5)
		return sim_trace_error(t, "%u fields, expected 5: arrival_ms devno blkno bcount flags",
				       t->nfield);
	if (!sim_parse_fixed(t->field[0], 6, &time_ns))
		return sim_trace_error(t, "arrival time '%s' is not a non-negative number of "
				       "milliseconds", t->field[0]);
	if (!sim_parse_u64(t->field[1], &devno) || devno > UINT32_MAX)
		return sim_trace_error(t, "device number '%s' is not a number", t->field[1]);
	if (!sim_parse_u64(t->field[2], &blkno) || blkno >= (1ull << 54))
		return sim_trace_error(t, "block number '%s' is not a block number", t->field[2]);
	if (!sim_parse_u64(t->field[3], &bcount) || bcount == 0 || bcount >= (1ull << 32))
		return sim_trace_error(t, "block count '%s' is not a positive number of blocks",
				       t->field[3]);
	if (!sim_parse_u64(t->field[4], &flags) || flags > UINT32_MAX)
		return sim_trace_error(t, "flags '%s' is not a number (bit 0 = read)", t->field[4]);
	ret->arrival_ns = time_ns;
	ret->dev = (uint32_t)devno;
	ret->offset = blkno * SIM_SECTOR;
	ret->len = bcount * SIM_SECTOR;
	ret->op = (flags & 1) ? POLICY_OP_READ : POLICY_OP_WRITE;
	ret->flags = (flags & 1) ? POLICY_REQ_SYNC : 0;
	return 1;
}

static int parse_validate(struct sim_trace *t, struct sim_io *ret)
{
	static const char *const actions[] = { "Hit", "Miss", "Doub", "Trip" };
	uint64_t blkno, blocks, serv_ns, inter_ns;
	bool known = false;

	if (t->nfield != 6)
		return sim_trace_error(t, "%u fields, expected 6: R|W Hit|Miss|Doub|Trip blkno blocks "
				       "service_us next_interarrival_us", t->nfield);
	if (strcmp(t->field[0], "R") && strcmp(t->field[0], "W"))
		return sim_trace_error(t, "operation '%s' is neither R nor W", t->field[0]);
	for (unsigned i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		known |= !strcmp(t->field[1], actions[i]);
	if (!known)
		return sim_trace_error(t, "buffer action '%s' is not Hit, Miss, Doub or Trip",
				       t->field[1]);
	if (!sim_parse_u64(t->field[2], &blkno) || blkno >= (1ull << 54))
		return sim_trace_error(t, "block number '%s' is not a block number", t->field[2]);
	if (!sim_parse_u64(t->field[3], &blocks) || blocks == 0 || blocks >= (1ull << 32))
		return sim_trace_error(t, "block count '%s' is not a positive number of blocks",
				       t->field[3]);
	if (!sim_parse_fixed(t->field[4], 3, &serv_ns))
		return sim_trace_error(t, "service time '%s' is not a non-negative number of "
				       "microseconds", t->field[4]);
	if (!sim_parse_fixed(t->field[5], 3, &inter_ns))
		return sim_trace_error(t, "next inter-arrival time '%s' is not a non-negative number "
				       "of microseconds", t->field[5]);
	ret->op = t->field[0][0] == 'R' ? POLICY_OP_READ : POLICY_OP_WRITE;
	ret->flags = ret->op == POLICY_OP_READ ? POLICY_REQ_SYNC : 0;
	ret->offset = blkno * SIM_SECTOR;
	ret->len = blocks * SIM_SECTOR;
	ret->measured_ns = serv_ns;
	ret->think_ns = inter_ns;
	return 1;
}

const struct sim_trace_format sim_trace_fmt_disksim = {
	.name = "disksim",
	.summary = "DiskSim ASCII: arrival_ms devno blkno bcount flags (bit 0 = read)",
	.parse = parse_ascii,
};

const struct sim_trace_format sim_trace_fmt_validate = {
	.name = "validate",
	.summary = "DiskSim validate: R|W Hit|Miss blkno blocks service_us next_interarrival_us "
		   "(closed loop)",
	.closed_loop = true,
	.parse = parse_validate,
};
