/* SPDX-License-Identifier: MIT */
/*
 * gen_dfsio.c - Hadoop's TestDFSIO benchmark as a closed-loop workload:
 * `files` map tasks (stream ids 1..files), each moving its own file of
 * `file_size` bytes sequentially in `size` requests and keeping `iodepth`
 * of them outstanding, with `think` between a completion and the task's
 * next request.  mode=write writes the files, mode=read reads them,
 * mode=write-read writes each file and then reads it back (TestDFSIO
 * -write followed by -read on the same files).  The files lie one after
 * the other from offset 0, as a fresh file system allocates them.
 *
 * The source is closed loop by nature: arrival times only order the
 * tasks (every task starts at 0 and its requests are emitted round robin
 * with the others', so the engine's read-ahead window never starves a
 * task); when each request arrives is the engine's business.
 */
#include <errno.h>

#include "gen.h"

enum { MODE_WRITE, MODE_READ, MODE_WRITE_READ };
static const char *const dfsio_modes[] = { "write", "read", "write-read", NULL };

struct dfsio_opts {
	struct sim_gen_common c;
	uint64_t files, file_size, size, iodepth, think;
	unsigned mode;
};

static const struct policy_opt dfsio_tab[] = {
	{ .name = "requests", .type = POLICY_OPT_UINT, .off = offsetof(struct dfsio_opts, c.requests),
	  .def = "0", .min = 0, .max = UINT64_MAX - 1,
	  .help = "stop after this many requests (0 = the whole job)" },
	{ .name = "span", .type = POLICY_OPT_SIZE, .off = offsetof(struct dfsio_opts, c.span),
	  .def = "0", .min = 0, .max = 1ull << 50,
	  .help = "address space used (0 = the capacity of the first device)" },
	{ .name = "files", .type = POLICY_OPT_UINT, .off = offsetof(struct dfsio_opts, files),
	  .def = "4", .min = 1, .max = SIM_GEN_MAX_STREAMS,
	  .help = "files, one map task (stream) each (TestDFSIO -nrFiles)" },
	{ .name = "file_size", .type = POLICY_OPT_SIZE, .off = offsetof(struct dfsio_opts, file_size),
	  .def = "100MiB", .min = 4096, .max = 1ull << 44,
	  .help = "bytes per file (TestDFSIO -fileSize)" },
	{ .name = "size", .type = POLICY_OPT_SIZE, .off = offsetof(struct dfsio_opts, size),
	  .def = "128KiB", .min = 512, .max = 64ull << 20,
	  .help = "request size at the block device (128 KiB: Linux's default read-ahead)" },
	{ .name = "mode", .type = POLICY_OPT_ENUM, .off = offsetof(struct dfsio_opts, mode),
	  .def = "write-read", .choices = dfsio_modes,
	  .help = "write, read, or write-read (each task writes its file, then reads it)" },
	{ .name = "iodepth", .type = POLICY_OPT_UINT, .off = offsetof(struct dfsio_opts, iodepth),
	  .def = "1", .min = 1, .max = 65536,
	  .help = "requests each task keeps outstanding (--iodepth overrides)" },
	{ .name = "think", .type = POLICY_OPT_TIME, .off = offsetof(struct dfsio_opts, think),
	  .def = "0", .min = 0, .max = 3600 * POLICY_NS_PER_S,
	  .help = "delay from a completion to the task's next request" },
	{ .name = NULL },
};

static int dfsio_init(struct sim_gen *g, char *err, size_t errlen)
{
	const struct dfsio_opts *o = g->opts;
	uint64_t file = o->file_size - o->file_size % 512, per_phase;
	int r;

	if (o->files > (1ull << 50) / file) {
		snprintf(err, errlen, "%llu files of %llu bytes do not fit in 1 PiB",
			 (unsigned long long)o->files, (unsigned long long)file);
		return -EINVAL;
	}
	r = sim_gen_common(g, &o->c, o->files * file, err, errlen);
	if (r < 0)
		return r;
	r = sim_gen_streams(g, (unsigned)o->files);
	if (r < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	per_phase = (file + o->size - 1) / o->size;
	if (!g->max_requests)
		g->max_requests = o->files * per_phase * (o->mode == MODE_WRITE_READ ? 2 : 1);
	g->src.closed_loop = true;
	g->src.iodepth = (unsigned)o->iodepth;
	for (unsigned i = 0; i < g->nstream; i++) {
		struct sim_gen_stream *s = &g->stream[i];

		s->id = i + 1;
		s->base = (uint64_t)i * file;
		s->size = file;
		s->pos = 0;
		s->op = o->mode == MODE_READ ? POLICY_OP_READ : POLICY_OP_WRITE;
		s->t = 0;
	}
	return 0;
}

static void dfsio_emit(struct sim_gen *g, unsigned i, struct sim_io *io)
{
	const struct dfsio_opts *o = g->opts;
	struct sim_gen_stream *s = &g->stream[i];

	io->stream = s->id;
	io->op = s->op;
	io->offset = s->base + s->pos;
	io->len = s->size - s->pos < o->size ? s->size - s->pos : o->size;
	io->think_ns = o->think;
	io->hint_size = o->size;
	io->hint_pattern = POLICY_PATTERN_SEQUENTIAL;
	s->pos += io->len;
	/* Nominal times: only the order of the tasks' requests (round robin). */
	s->t++;
	if (s->pos < s->size)
		return;
	s->pos = 0;
	if (s->op == POLICY_OP_WRITE && o->mode == MODE_WRITE_READ)
		s->op = POLICY_OP_READ;
	else
		s->t = UINT64_MAX;   /* the task is done */
}

const struct sim_gen_kind sim_gen_dfsio = {
	.name = "dfsio",
	.summary = "Hadoop TestDFSIO: N tasks writing and/or reading a file each, closed loop",
	.opts = dfsio_tab,
	.opts_size = sizeof(struct dfsio_opts),
	.init = dfsio_init,
	.emit = dfsio_emit,
};
