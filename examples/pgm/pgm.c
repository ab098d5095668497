/* SPDX-License-Identifier: MIT */
/*
 * pgm.c - the PGM image tool of the IOSIG paper (Sect. 7.2), annotated with
 * I/O signatures.
 *
 * A binary PGM ("P5") is a short header followed by one byte per pixel.
 * Three transformations produce three access patterns on the output file,
 * chunk by chunk, each chunk flushed with fsync as in the paper:
 *   posterize  sequential: chunk i is written at position i;
 *   divide     strided: even chunks go to the upper half in order, odd
 *              chunks to the lower half (the output seeks between halves);
 *   shuffle    random: chunk i goes to position perm[i], a permutation
 *              drawn from a seeded generator (uniformly spread seeks).
 * Full chunks are moved; a partial last chunk stays at the end.
 *
 * The output is opened by one of several annotated open() calls: the
 * profile chosen on the command line selects which signature describes it
 * (the parameter sets of the paper's Fig. 10), and the values come from the
 * command line: size_per_io(chunk) totalsize(size).  Built without the
 * IOSIG compiler plugin the pragmas are ignored and the program is the same.
 *
 * `pgm verify` recomputes the expected output chunk by chunk from the input
 * and compares; `--verify` does that right after a transformation.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum op { OP_GEN, OP_POSTERIZE, OP_DIVIDE, OP_SHUFFLE, OP_VERIFY, OP_SUM };

/* Which signature describes the output (IOSIG paper Fig. 10, ps1..ps4). */
enum profile {
	PROF_NONE,     /* no constraint: fastest device (ps4) */
	PROF_PERSIST,  /* persist (ps3) */
	PROF_RELIABLE, /* persist min_mttdl(20*y) (ps2) */
	PROF_GLOBAL,   /* global persist (ps1) */
};

static const char *const profile_names[] = { "none", "persist", "reliable", "global" };

struct opts {
	enum op op;
	enum op vop;           /* verify: the transformation to check */
	long long size;        /* gen: pixel bytes */
	long long width;       /* gen: image width (0: derived from size) */
	long long chunk;       /* bytes per I/O */
	uint64_t seed;         /* gen pixels and shuffle permutation */
	enum profile profile;
	bool sync;             /* fsync after every chunk */
	bool verify;           /* verify after transforming */
	bool json;             /* one JSON line with the timing */
	const char *in;
	const char *out;
};

/* The image geometry and where the pixels start. */
struct pgm {
	long long width, height;
	long long data;        /* bytes of pixel data */
	long long hdr;         /* header length */
	char header[64];
};

static const char *prog = "pgm";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64*: deterministic for a seed, the same on every machine. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Parses "65536", "64K", "64KiB", "1M", "2GiB" (powers of 1024). */
static long long parse_size(const char *opt, const char *s)
{
	char *end;
	double v;
	long long mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0)
		die("%s: '%s' is not a size (use e.g. 65536, 64KiB, 32MiB)", opt, s);
	switch (*end) {
	case 'k': case 'K': mul = 1ll << 10; end++; break;
	case 'm': case 'M': mul = 1ll << 20; end++; break;
	case 'g': case 'G': mul = 1ll << 30; end++; break;
	case 't': case 'T': mul = 1ll << 40; end++; break;
	default: break;
	}
	if (mul > 1 && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end == 'B' && mul == 1)
		end++;
	if (*end)
		die("%s: '%s' is not a size (use e.g. 65536, 64KiB, 32MiB)", opt, s);
	if (v * (double)mul > 9e18)
		die("%s: '%s' is too large", opt, s);
	return (long long)(v * (double)mul);
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: pgm gen [--size S] [--width W] [--seed N] OUT\n"
		"       pgm posterize|divide|shuffle --chunk C [OPTIONS] IN OUT\n"
		"       pgm verify posterize|divide|shuffle --chunk C [--seed N] IN OUT\n"
		"       pgm sum FILE\n"
		"\n"
		"The PGM tool of the IOSIG paper (Sect. 7.2): three transformations with\n"
		"sequential, strided and random chunked writes, each chunk fsync'ed.\n"
		"\n"
		"Options:\n"
		"  --chunk C        bytes per I/O (size_per_io), e.g. 64KiB\n"
		"  --size S         gen: pixel bytes (default 16MiB)\n"
		"  --width W        gen: image width (default: a power of two near sqrt(S))\n"
		"  --seed N         gen pixels and shuffle order (default 1)\n"
		"  --profile P      signature of the output: none, persist, reliable, global\n"
		"                   (IOSIG paper Fig. 10 ps4, ps3, ps2, ps1; default none)\n"
		"  --no-sync        do not fsync each chunk\n"
		"  --verify         check the output after writing it\n"
		"  --json           print one JSON line with the timing\n"
		"  -h, --help       this help\n");
}

static enum op parse_op(const char *s, bool transforms_only)
{
	if (!strcmp(s, "posterize"))
		return OP_POSTERIZE;
	if (!strcmp(s, "divide"))
		return OP_DIVIDE;
	if (!strcmp(s, "shuffle"))
		return OP_SHUFFLE;
	if (!transforms_only) {
		if (!strcmp(s, "gen"))
			return OP_GEN;
		if (!strcmp(s, "verify"))
			return OP_VERIFY;
		if (!strcmp(s, "sum"))
			return OP_SUM;
	}
	die("unknown %s '%s' (try --help)", transforms_only ? "transformation" : "command", s);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const char *pos[3];
	int npos = 0, i = 2;

	memset(o, 0, sizeof(*o));
	o->size = 16ll << 20;
	o->seed = 1;
	o->sync = true;
	if (argc < 2)
		die("no command given (try --help)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		exit(0);
	}
	o->op = parse_op(argv[1], false);
	if (o->op == OP_VERIFY) {
		if (argc < 3)
			die("verify: name the transformation to check");
		o->vop = parse_op(argv[2], true);
		i = 3;
	}
	for (; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--no-sync")) {
			o->sync = false;
		} else if (!strcmp(a, "--verify")) {
			o->verify = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (a[0] == '-' && a[1] == '-' && !v) {
			die("%s needs a value", a);
		} else if (!strcmp(a, "--chunk")) {
			o->chunk = parse_size(a, v), i++;
		} else if (!strcmp(a, "--size")) {
			o->size = parse_size(a, v), i++;
		} else if (!strcmp(a, "--width")) {
			o->width = parse_size(a, v), i++;
		} else if (!strcmp(a, "--seed")) {
			o->seed = (uint64_t)parse_size(a, v), i++;
		} else if (!strcmp(a, "--profile")) {
			size_t p;

			for (p = 0; p < sizeof(profile_names) / sizeof(profile_names[0]); p++)
				if (!strcmp(v, profile_names[p]))
					break;
			if (p == sizeof(profile_names) / sizeof(profile_names[0]))
				die("--profile: '%s' is not none, persist, reliable or global", v);
			o->profile = (enum profile)p;
			i++;
		} else if (a[0] == '-' && a[1]) {
			die("unknown option '%s' (try --help)", a);
		} else if (npos < 3) {
			pos[npos++] = a;
		} else {
			die("too many arguments (try --help)");
		}
	}
	if (o->op == OP_GEN || o->op == OP_SUM) {
		if (npos != 1)
			die("%s takes one file name", o->op == OP_GEN ? "gen" : "sum");
		o->out = o->in = pos[0];
		if (o->op == OP_GEN && o->size <= 0)
			die("gen: --size must be positive");
		return;
	}
	if (npos != 2)
		die("name the input and the output file");
	o->in = pos[0];
	o->out = pos[1];
	if (o->chunk <= 0)
		die("--chunk is required and must be positive, e.g. --chunk 64KiB");
}

/* ---- I/O helpers --------------------------------------------------------- */

static void pwrite_all(int fd, const void *buf, size_t len, off_t off, const char *path)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("writing %s: %s", path, n < 0 ? strerror(errno) : "short write");
		p += n;
		len -= (size_t)n;
		off += n;
	}
}

static void pread_all(int fd, void *buf, size_t len, off_t off, const char *path)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("reading %s: %s", path, n < 0 ? strerror(errno) : "unexpected end of file");
		p += n;
		len -= (size_t)n;
		off += n;
	}
}

/* Reads and checks the header of a binary PGM with maxval 255. */
static void pgm_read_header(int fd, const char *path, struct pgm *img)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long long w, h, maxval;
	int used = 0;
	struct stat st;

	if (n < 0)
		die("reading %s: %s", path, strerror(errno));
	buf[n] = '\0';
	if (sscanf(buf, "P5 %lld %lld %lld%n", &w, &h, &maxval, &used) != 3 || used >= n ||
	    w <= 0 || h <= 0 || maxval != 255)
		die("%s: not a binary PGM with maxval 255 (P5 header expected)", path);
	img->width = w;
	img->height = h;
	img->hdr = used + 1;   /* one whitespace byte ends the header */
	img->data = w * h;
	memcpy(img->header, buf, (size_t)img->hdr);
	img->header[img->hdr] = '\0';
	if (fstat(fd, &st))
		die("%s: %s", path, strerror(errno));
	if (st.st_size != img->hdr + img->data)
		die("%s: %lld bytes, the header says %lld", path, (long long)st.st_size,
		    img->hdr + img->data);
}

/* ---- the annotated opens ------------------------------------------------- */

/*
 * Opens the output for writing.  One open() per signature: the pragma
 * describes how this program will write the file; the values are run-time
 * expressions evaluated at the call.
 */
static int open_output(const char *path, enum profile profile, bool sequential, long long chunk,
		       long long total)
{
	int flags = O_CREAT | O_WRONLY | O_TRUNC;
	int fd;

	/* Used only by the pragmas: without the plugin they are not read. */
	(void)chunk;
	(void)total;
	if (sequential) {
		if (profile == PROF_GLOBAL) {
#pragma io sig global persist sequential_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		} else if (profile == PROF_RELIABLE) {
#pragma io sig persist min_mttdl(20 * y) sequential_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		} else if (profile == PROF_PERSIST) {
#pragma io sig persist sequential_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		} else {
#pragma io sig sequential_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		}
	} else {
		if (profile == PROF_GLOBAL) {
#pragma io sig global persist random_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		} else if (profile == PROF_RELIABLE) {
#pragma io sig persist min_mttdl(20 * y) random_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		} else if (profile == PROF_PERSIST) {
#pragma io sig persist random_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		} else {
#pragma io sig random_access size_per_io(chunk) totalsize(total)
			fd = open(path, flags, 0644);
		}
	}
	if (fd < 0)
		die("cannot create %s: %s", path, strerror(errno));
	return fd;
}

/* ---- the transformations ------------------------------------------------- */

/* Four grey levels. */
static void posterize_chunk(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((p[i] >> 6) * 85);
}

/*
 * Where the full chunk i (of nfull) lands in the output, in chunks.
 * posterize: i; divide: even chunks first, then odd ones; shuffle:
 * perm[i].
 */
static long long chunk_dest(enum op op, long long i, long long nfull, const long long *perm)
{
	switch (op) {
	case OP_DIVIDE:
		return i % 2 == 0 ? i / 2 : (nfull + 1) / 2 + i / 2;
	case OP_SHUFFLE:
		return perm[i];
	default:
		return i;
	}
}

/* A uniformly random permutation of 0..n-1 for the seed (Fisher-Yates). */
static long long *make_perm(long long n, uint64_t seed)
{
	long long *perm = malloc((size_t)(n ? n : 1) * sizeof(*perm));
	uint64_t s = seed ^ 0x5851f42d4c957f2dull;

	if (!perm)
		die("out of memory for %lld chunks", n);
	for (long long i = 0; i < n; i++)
		perm[i] = i;
	for (long long i = n - 1; i > 0; i--) {
		long long j = (long long)(rng_next(&s) % (uint64_t)(i + 1));
		long long t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	return perm;
}

/*
 * Runs (or, with `check`, verifies) a transformation from `in` to `out`.
 * Returns the seconds spent on the output I/O.
 */
static double transform(const struct opts *o, enum op op, bool check)
{
	struct pgm img;
	long long nfull, tail, *perm = NULL;
	unsigned char *buf, *got = NULL;
	int in, out;
	double t0, t;

	in = open(o->in, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		die("cannot open %s: %s", o->in, strerror(errno));
	pgm_read_header(in, o->in, &img);
	nfull = img.data / o->chunk;
	tail = img.data % o->chunk;
	if (op == OP_SHUFFLE)
		perm = make_perm(nfull, o->seed);
	buf = malloc((size_t)o->chunk);
	if (check)
		got = malloc((size_t)o->chunk);
	if (!buf || (check && !got))
		die("out of memory for a %lld-byte chunk", o->chunk);

	t0 = now();
	if (check) {
		out = open(o->out, O_RDONLY | O_CLOEXEC);
		if (out < 0)
			die("cannot open %s: %s", o->out, strerror(errno));
		struct stat st;
		if (fstat(out, &st) || st.st_size != img.hdr + img.data)
			die("%s: wrong size %lld, expected %lld", o->out, (long long)st.st_size,
			    img.hdr + img.data);
		pread_all(out, got, (size_t)img.hdr, 0, o->out);
		if (memcmp(got, img.header, (size_t)img.hdr))
			die("%s: header differs from the input's", o->out);
	} else {
		out = open_output(o->out, o->profile, op == OP_POSTERIZE, o->chunk,
				  img.hdr + img.data);
		pwrite_all(out, img.header, (size_t)img.hdr, 0, o->out);
	}
	for (long long i = 0; i <= nfull; i++) {
		size_t len = (size_t)(i < nfull ? o->chunk : tail);
		off_t src = (off_t)(img.hdr + i * o->chunk);
		off_t dst = i < nfull ? (off_t)(img.hdr + chunk_dest(op, i, nfull, perm) * o->chunk) : src;

		if (!len)
			break;
		pread_all(in, buf, len, src, o->in);
		if (op == OP_POSTERIZE)
			posterize_chunk(buf, len);
		if (check) {
			pread_all(out, got, len, dst, o->out);
			if (memcmp(buf, got, len))
				die("%s: chunk %lld (at byte %lld) differs from the expected %s output",
				    o->out, i, (long long)dst,
				    op == OP_POSTERIZE ? "posterize" : op == OP_DIVIDE ? "divide" : "shuffle");
			continue;
		}
		pwrite_all(out, buf, len, dst, o->out);
		if (o->sync && fsync(out))
			die("fsync %s: %s", o->out, strerror(errno));
	}
	if (!check && fsync(out))
		die("fsync %s: %s", o->out, strerror(errno));
	t = now() - t0;
	if (close(out))
		die("closing %s: %s", o->out, strerror(errno));
	close(in);
	free(buf);
	free(got);
	free(perm);
	return t;
}

/* Writes a deterministic test image (a gradient with seeded noise). */
static double generate(const struct opts *o)
{
	long long width = o->width, height, hdr, done = 0;
	size_t cap = 1 << 20;
	char header[64];
	unsigned char *buf;
	uint64_t s = o->seed;
	double t0;
	int fd;

	if (!width) {
		width = 1;
		while (width * width * 4 <= o->size)
			width *= 2;
	}
	height = (o->size + width - 1) / width;
	hdr = snprintf(header, sizeof(header), "P5\n%lld %lld\n255\n", width, height);
	buf = malloc(cap);
	if (!buf)
		die("out of memory");
	t0 = now();
	{
		long long chunk = (long long)cap, total = hdr + width * height;

#pragma io sig persist sequential_access size_per_io(chunk) totalsize(total)
		fd = open(o->out, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		(void)chunk;
		(void)total;
	}
	if (fd < 0)
		die("cannot create %s: %s", o->out, strerror(errno));
	pwrite_all(fd, header, (size_t)hdr, 0, o->out);
	while (done < width * height) {
		size_t n = (size_t)(width * height - done) < cap ? (size_t)(width * height - done) : cap;

		for (size_t i = 0; i < n; i++) {
			long long px = done + (long long)i;
			unsigned v = (unsigned)((px % width) * 255 / width + (px / width) * 255 / height) / 2;

			buf[i] = (unsigned char)((v + (rng_next(&s) & 31)) & 255);
		}
		pwrite_all(fd, buf, n, (off_t)(hdr + done), o->out);
		done += (long long)n;
	}
	if (fsync(fd) || close(fd))
		die("writing %s: %s", o->out, strerror(errno));
	free(buf);
	return now() - t0;
}

/* FNV-1a 64 of a whole file. */
static void sum(const char *path)
{
	unsigned char buf[1 << 16];
	uint64_t h = 0xcbf29ce484222325ull;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
	}
	if (n < 0)
		die("reading %s: %s", path, strerror(errno));
	close(fd);
	printf("%016" PRIx64 "  %s\n", h, path);
}

static const char *op_name(enum op op)
{
	static const char *const names[] = { "gen", "posterize", "divide", "shuffle", "verify", "sum" };

	return names[op];
}

int main(int argc, char **argv)
{
	struct opts o;
	double t;

	parse_args(argc, argv, &o);
	switch (o.op) {
	case OP_SUM:
		sum(o.in);
		return 0;
	case OP_GEN:
		t = generate(&o);
		break;
	case OP_VERIFY:
		t = transform(&o, o.vop, true);
		printf("%s: %s output verified\n", o.out, op_name(o.vop));
		return 0;
	default:
		t = transform(&o, o.op, false);
		if (o.verify)
			transform(&o, o.op, true);
		break;
	}
	if (o.json)
		printf("{\"op\":\"%s\",\"profile\":\"%s\",\"chunk\":%lld,\"seconds\":%.6f,\"out\":\"%s\"}\n",
		       op_name(o.op), profile_names[o.profile], o.chunk, t, o.out);
	return 0;
}
