/* SPDX-License-Identifier: MIT */
/*
 * trace_blkparse.c - the text that `blkparse` prints for a blktrace
 * capture:
 *
 *   maj,min cpu seq seconds.nanoseconds pid action rwbs [sector + blocks] [process]
 *
 * Arrival is the Q (queued) action: the moment the submitting process
 * handed the bio to the block layer, before any scheduler merged, delayed
 * or reordered it.  That is exactly the input a simulated scheduler must
 * see; the later actions (G, I, D, C, M ...) describe what the *traced*
 * system's scheduler and disk did, so they are checked for syntax and then
 * ignored.  One Q line = one request: stream = pid, op from rwbs (R read,
 * W write, F with no data = flush, S = synchronous; D discard and N lines
 * are skipped), sectors of 512 bytes.  The summary blkparse prints at the
 * end ("CPU0 (8,16):", "Total (8,16):") ends the events.
 */
#include <errno.h>
#include <string.h>

#include "trace.h"

/* Does the line start blkparse's end-of-run summary? */
static bool is_summary(const struct sim_trace *t)
{
	const char *f = t->field[0];

	if (!strncmp(f, "CPU", 3) && f[3] >= '0' && f[3] <= '9')
		return true;
	return !strcmp(f, "Total") && t->nfield > 1 && t->field[1][0] == '(';
}

/* "maj,min" -> maj << 20 | min (the kernel's dev_t encoding). */
static bool parse_dev(const char *s, uint32_t *ret)
{
	char buf[32];
	char *comma;
	uint64_t maj, min;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	comma = strchr(buf, ',');
	if (!comma)
		return false;
	*comma = '\0';
	if (!sim_parse_u64(buf, &maj) || !sim_parse_u64(comma + 1, &min) ||
	    maj >= (1u << 12) || min >= (1u << 20))
		return false;
	*ret = (uint32_t)(maj << 20 | min);
	return true;
}

static bool valid_rwbs(const char *s)
{
	if (!*s || strlen(s) > 8)
		return false;
	for (; *s; s++)
		if (*s < 'A' || *s > 'Z')
			return false;
	return true;
}

static int parse_blkparse(struct sim_trace *t, struct sim_io *ret)
{
	const char *action, *rwbs;
	uint64_t cpu, seq, pid, time_ns, sector, blocks;
	uint32_t dev;
	bool has_data;

	if (is_summary(t))
		return 2;
	if (!parse_dev(t->field[0], &dev))
		return sim_trace_error(t, "'%s' is not a device 'major,minor': expected a blkparse "
				       "event line 'maj,min cpu seq time pid action rwbs ...'",
				       t->field[0]);
	if (t->nfield < 6)
		return sim_trace_error(t, "%u fields, a blkparse event needs at least 6 "
				       "(maj,min cpu seq time pid action)", t->nfield);
	if (!sim_parse_u64(t->field[1], &cpu))
		return sim_trace_error(t, "cpu '%s' is not a number", t->field[1]);
	if (!sim_parse_u64(t->field[2], &seq))
		return sim_trace_error(t, "sequence '%s' is not a number", t->field[2]);
	if (!sim_parse_fixed(t->field[3], 9, &time_ns))
		return sim_trace_error(t, "time '%s' is not seconds.nanoseconds", t->field[3]);
	if (!sim_parse_u64(t->field[4], &pid) || pid > UINT32_MAX)
		return sim_trace_error(t, "pid '%s' is not a number", t->field[4]);
	action = t->field[5];
	if (strlen(action) > 2 || action[0] < 'A' || action[0] > 'z')
		return sim_trace_error(t, "action '%s' is not a blktrace action (Q, G, I, D, C ...)",
				       action);
	if (strcmp(action, "Q"))
		return 0;

	if (t->nfield < 7)
		return sim_trace_error(t, "Q event without rwbs field");
	rwbs = t->field[6];
	if (!valid_rwbs(rwbs))
		return sim_trace_error(t, "rwbs '%s' is not made of capital letters (R, W, D, F, S ...)",
				       rwbs);
	has_data = t->nfield >= 8 && t->field[7][0] != '[';
	if (has_data) {
		if (t->nfield < 10 || strcmp(t->field[8], "+"))
			return sim_trace_error(t, "Q event: expected 'sector + blocks' after rwbs '%s'",
					       rwbs);
		if (!sim_parse_u64(t->field[7], &sector) || sector >= (1ull << 54))
			return sim_trace_error(t, "sector '%s' is not a sector number", t->field[7]);
		if (!sim_parse_u64(t->field[9], &blocks) || blocks >= (1ull << 32))
			return sim_trace_error(t, "block count '%s' is not a number of sectors",
					       t->field[9]);
	} else {
		sector = blocks = 0;
	}

	if (strchr(rwbs, 'D'))          /* discard: not modelled */
		return 0;
	if (strchr(rwbs, 'R'))
		ret->op = POLICY_OP_READ;
	else if (strchr(rwbs, 'W'))
		ret->op = POLICY_OP_WRITE;
	else if (strchr(rwbs, 'F'))
		ret->op = POLICY_OP_FLUSH;
	else
		return 0;                /* N and other data-less events */
	if (ret->op != POLICY_OP_FLUSH && blocks == 0) {
		if (!strchr(rwbs, 'F'))
			return sim_trace_error(t, "%s request of 0 blocks", rwbs);
		ret->op = POLICY_OP_FLUSH; /* "WFS 0 + 0": a pre-flush without data */
	}
	ret->arrival_ns = time_ns;
	ret->offset = ret->op == POLICY_OP_FLUSH ? 0 : sector * SIM_SECTOR;
	ret->len = ret->op == POLICY_OP_FLUSH ? 0 : blocks * SIM_SECTOR;
	ret->stream = (uint32_t)pid;
	ret->dev = dev;
	if (ret->op == POLICY_OP_READ || strchr(rwbs, 'S'))
		ret->flags |= POLICY_REQ_SYNC;
	return 1;
}

const struct sim_trace_format sim_trace_fmt_blkparse = {
	.name = "blkparse",
	.summary = "blkparse text; arrival = Q action, stream = pid, 512-byte sectors",
	.parse = parse_blkparse,
};
