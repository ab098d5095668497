/* SPDX-License-Identifier: MIT */
/*
 * iosig.h - the whole public API of libiosig.
 *
 * libiosig reads I/O signatures ("#pragma io sig ..."), knows the storage of
 * the machine it runs on (the catalog), evaluates the reliability and
 * throughput models of the IOSIG paper and picks the mount point a file
 * should live on.  See docs/design.md for the contracts between the parts.
 *
 * Conventions (liburing / kernel style):
 *  - actions return 0 or a negative errno value, never -1 plus errno;
 *  - predicates return bool; constructors return NULL or set *ret_*;
 *  - output parameters are named ret_* and are left untouched on failure;
 *  - destroy functions accept NULL;
 *  - the library never prints; errors carry their text in struct iosig_error.
 */
#ifndef IOSIG_H
#define IOSIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported; the library builds with
 * -fvisibility=hidden so nothing else is. */
#pragma GCC visibility push(default)

#define IOSIG_VERSION_MAJOR 0
#define IOSIG_VERSION_MINOR 1
#define IOSIG_VERSION_PATCH 0

/* Version of the library actually loaded, "MAJOR.MINOR.PATCH". */
const char *iosig_version(void);

/* ------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------- */

/*
 * Where and why something failed.  Filled by every function that takes one
 * (the pointer may be NULL when the caller does not care).
 *
 * Some messages also name an earlier place of the same text, e.g. "'tmp'
 * contradicts 'persist' given at line 1, column 5: ...".  Then related_line
 * is not 0, related_* say where that place is, and msg[related_msg_offset]
 * starts the related_msg_length bytes that spell it ("line 1, column 5"),
 * so a caller that shows positions differently (a compiler plugin mapping
 * the pragma text to its source file) replaces exactly those bytes with its
 * own text, without reading the words around them.  related_msg_length is
 * 0 when msg does not spell the place (e.g. cut short).  All related_* are
 * 0 when the message names no earlier place.
 */
struct iosig_error {
	char file[256];   /* file the error is in ("" for a string input) */
	int line;         /* 1-based line, 0 when not applicable */
	int column;       /* 1-based column, 0 when not applicable */
	size_t offset;    /* byte offset of the error in the parsed text */
	size_t length;    /* length of the offending span in bytes, >= 1 when known */
	char msg[320];    /* what is wrong and, where possible, what to do */
	int related_line;          /* 1-based line of the earlier place, 0 for none */
	int related_column;        /* its 1-based byte column */
	size_t related_offset;     /* its byte offset in the parsed text */
	size_t related_msg_offset; /* where msg spells it ("line L, column C") */
	size_t related_msg_length; /* how many bytes of msg do, 0 when none */
};

/* ------------------------------------------------------------------------
 * Signatures (docs/design.md §3)
 * ---------------------------------------------------------------------- */

/* Parameters of the signature language; aliases map onto these. */
enum iosig_param {
	IOSIG_P_GLOBAL,       /* global: visible on all nodes of the job */
	IOSIG_P_LOCAL,        /* local: node-local storage is fine */
	IOSIG_P_PERSIST,      /* persist: must survive a reboot */
	IOSIG_P_TMP,          /* tmp / temp: temporary data */
	IOSIG_P_SEQUENTIAL,   /* sequential_access / sequential */
	IOSIG_P_RANDOM,       /* random_access / random */
	IOSIG_P_ARCHIVE,      /* archive: a mount labelled archive */
	IOSIG_P_TAMPER,       /* tamper / tamperproof: a mount labelled tamperproof */
	IOSIG_P_SIZE_PER_IO,  /* size_per_io(s) / size_per_IO(s), bytes */
	IOSIG_P_TOTALSIZE,    /* totalsize(s), bytes */
	IOSIG_P_MIN_MTTDL,    /* min_mttdl(t) / MTTDL(t), seconds */
	IOSIG_P_AVAILABILITY, /* availability(p): max P(loss) over the job lifetime */
	IOSIG_P_LIFETIME,     /* lifetime(t) (jobwide), seconds */
	IOSIG_P_NAME,         /* name("N") */
	IOSIG_P_COUNT
};

#define IOSIG_HAS(p) (1u << (p))

/*
 * An evaluated signature: every value is a number in base units (bytes,
 * seconds, probability).  `set` says which parameters were given; a field
 * whose bit is clear holds 0 and the documented default applies.
 */
struct iosig_sig {
	uint32_t set;          /* IOSIG_HAS(IOSIG_P_*) bits */
	uint32_t reserved0;
	uint64_t size_per_io;  /* bytes */
	uint64_t totalsize;    /* bytes */
	double min_mttdl;      /* seconds */
	double availability;   /* maximum probability of loss during lifetime */
	double lifetime;       /* seconds (from jobwide lifetime) */
	char name[64];         /* name("..."), "" if none */
	uint64_t reserved[4];
};

/* Kind of an expression node in a parsed (not yet evaluated) pragma. */
enum iosig_expr_kind {
	IOSIG_EXPR_INT,     /* integer literal: u.i */
	IOSIG_EXPR_FLOAT,   /* floating literal: u.f */
	IOSIG_EXPR_STRING,  /* string literal "1GiB": text (unescaped); u.f = its value, dim set */
	IOSIG_EXPR_UNIT,    /* unit constant (MiB, y, ppm...): text = name, u.f = value in base units */
	IOSIG_EXPR_IDENT,   /* C identifier evaluated at run time: text = name */
	IOSIG_EXPR_SLOT,    /* $N in canonical text: u.i = N */
	IOSIG_EXPR_NEG,     /* -lhs */
	IOSIG_EXPR_ADD,     /* lhs + rhs */
	IOSIG_EXPR_SUB,     /* lhs - rhs */
	IOSIG_EXPR_MUL,     /* lhs * rhs */
	IOSIG_EXPR_DIV,     /* lhs / rhs */
	IOSIG_EXPR_MOD,     /* lhs % rhs */
	IOSIG_EXPR_MEMBER,  /* lhs.text, or lhs->text when `arrow` */
	IOSIG_EXPR_INDEX,   /* lhs[rhs] */
	IOSIG_EXPR_CALL,    /* lhs(args[0], ..., args[nargs-1]) */
};

/* Physical dimension of a value, used to reject "size_per_io(3*h)". */
enum iosig_dim {
	IOSIG_DIM_NONE,     /* plain number: bytes / seconds / fraction by context */
	IOSIG_DIM_SIZE,     /* bytes */
	IOSIG_DIM_TIME,     /* seconds */
	IOSIG_DIM_FRACTION, /* probability (ppm) */
	IOSIG_DIM_RATE,     /* bytes per second: a size divided by a time ("430MiB/s");
	                       only iosig_parse_value() asks for it, no parameter has it */
};

/* One node of a value expression; owned by the struct iosig_pragma. */
struct iosig_expr {
	enum iosig_expr_kind kind;
	enum iosig_dim dim;          /* dimension after unit analysis */
	uint32_t offset;             /* span in the parsed text */
	uint32_t length;
	bool constant;               /* no IDENT/MEMBER/INDEX/CALL/SLOT below */
	bool arrow;                  /* MEMBER: "->" rather than "." */
	union {
		uint64_t i;
		double f;
	} u;
	const char *text;            /* IDENT/UNIT/MEMBER name, STRING contents */
	const struct iosig_expr *lhs;
	const struct iosig_expr *rhs;
	const struct iosig_expr *const *args; /* CALL arguments */
	unsigned nargs;
};

enum iosig_pragma_kind {
	IOSIG_PRAGMA_SIG,     /* #pragma io sig ... */
	IOSIG_PRAGMA_SIGDEF,  /* #pragma io sigdef name("N") ... */
	IOSIG_PRAGMA_JOBWIDE, /* #pragma io jobwide ... */
};

/* One parameter as written in a pragma. */
struct iosig_pragma_param {
	enum iosig_param id;
	uint32_t offset;             /* span of the whole parameter in the text */
	uint32_t length;
	const struct iosig_expr *expr; /* value; NULL for flag parameters */
};

/*
 * A parsed pragma.  The compiler plugins parse with this, resolve named
 * signatures through a registry, and lower each non-constant value
 * expression to code evaluated at the call site.
 */
struct iosig_pragma {
	enum iosig_pragma_kind kind;
	const char *name;            /* name("N"), NULL if none */
	unsigned nparams;
	const struct iosig_pragma_param *params; /* source order, at most one per id */
};

/*
 * Parse the text of one pragma after "#pragma io", e.g.
 * "sig name(\"ckpt\") size_per_io(chunk * KiB) persist".  Values may be C
 * expressions over identifiers.  On error, fills *err (offset/line/column
 * within `text`) and returns -EINVAL.
 */
int iosig_pragma_parse(const char *text, size_t len, struct iosig_pragma **ret_pragma,
		       struct iosig_error *err);
void iosig_pragma_free(struct iosig_pragma *pragma);

/* Named signature definitions (sigdef), optionally nested: a function-scope
 * registry has the file-scope registry as parent. */
struct iosig_registry;
struct iosig_registry *iosig_registry_new(const struct iosig_registry *parent);
void iosig_registry_free(struct iosig_registry *reg);
/* Adds a SIGDEF pragma (which must carry a name).  -EEXIST if already defined
 * in this very registry, -EINVAL if `def` is not a named sigdef. */
int iosig_registry_define(struct iosig_registry *reg, const struct iosig_pragma *def,
			  struct iosig_error *err);

/*
 * Resolve a SIG pragma: if it carries name("N"), start from that definition
 * (looked up in reg, then its parents) and apply the pragma's own parameters
 * on top; check contradictions.  *ret_pragma is a new, self-contained pragma
 * (it does not point into `sig` or the registry).  -ENOENT for an undefined
 * name, -EINVAL for contradictions.
 */
int iosig_pragma_resolve(const struct iosig_registry *reg, const struct iosig_pragma *sig,
			 struct iosig_pragma **ret_pragma, struct iosig_error *err);

/*
 * Canonical text of a resolved pragma: parameters in enum order, constant
 * values folded to base units, every non-constant value replaced by "$N"
 * (N counting from 0).  ret_slots[N] receives the expression for slot N;
 * *ret_nslots the number of slots.  -ENOSPC if buf or the slot array is too
 * small.
 */
int iosig_pragma_canonical(const struct iosig_pragma *pragma, char *buf, size_t size,
			   const struct iosig_expr **ret_slots, unsigned max_slots,
			   unsigned *ret_nslots);

/*
 * Parse signature text whose values are constants or "$N" (canonical text,
 * or what a user types for `iosig explain`), substitute values[N] (N <
 * nvalues) and evaluate.  A leading "sig" keyword is optional.  `reg` may be
 * NULL; when given, name("N") pulls in that definition.  Returns -EINVAL on
 * syntax errors and contradictions, -ERANGE on nonsensical values (negative
 * or non-finite sizes and times, probabilities outside [0, 1]).
 */
int iosig_sig_parse(const char *text, const struct iosig_registry *reg, const double *values,
		    unsigned nvalues, struct iosig_sig *ret_sig, struct iosig_error *err);

/* Canonical text of an evaluated signature.  Returns the length it needs
 * (like snprintf) or a negative errno. */
int iosig_sig_format(const struct iosig_sig *sig, char *buf, size_t size);

/*
 * Parse a constant value with optional units as users write it on command
 * lines, in configs and in string forms: "64*MiB", "64MiB", "1.5 GiB",
 * "20*y", "250us", "100ppm", "430MiB/s", "4096".  A unit's dimension must
 * match `dim` (a plain number is taken in base units: bytes, seconds,
 * fraction, bytes per second).  Besides the units of signatures, values
 * know "ns" and "us".  The one parser of values with units in IOSIG: the
 * configuration, the probe cache and the policies' and simulator's options
 * use it.  -EINVAL with a message in *err otherwise; -ERANGE for overflow or
 * non-finite values.
 */
int iosig_parse_value(const char *text, enum iosig_dim dim, double *ret_value,
		      struct iosig_error *err);

/* Value of a unit constant in base units and its dimension; false if `name`
 * is not a unit. */
bool iosig_unit_lookup(const char *name, double *ret_value, enum iosig_dim *ret_dim);

/* Primary name of a parameter ("size_per_io"); NULL for an id outside the enum. */
const char *iosig_param_name(enum iosig_param id);

/* ------------------------------------------------------------------------
 * Catalog: the storage of this machine (docs/design.md §5.1)
 * ---------------------------------------------------------------------- */

enum iosig_class {
	IOSIG_CLASS_RAM,     /* tmpfs, ramfs */
	IOSIG_CLASS_NVM,     /* pmem / DAX */
	IOSIG_CLASS_SSD,
	IOSIG_CLASS_HDD,
	IOSIG_CLASS_RAID,    /* md or hardware RAID */
	IOSIG_CLASS_NETWORK, /* nfs, cifs, lustre, ceph, beegfs, gpfs, glusterfs ... */
	IOSIG_CLASS_COUNT
};

/* Where a catalog value came from; later sources override earlier ones. */
enum iosig_source {
	IOSIG_SRC_NONE,       /* unknown */
	IOSIG_SRC_DEFAULT,    /* embedded class default */
	IOSIG_SRC_DISCOVERED, /* mount table, sysfs, statvfs */
	IOSIG_SRC_PROBED,     /* probe cache (iosig probe) */
	IOSIG_SRC_CONFIG,     /* configuration file */
};

/* Redundancy layout of the devices behind a mount. */
enum iosig_layout_kind {
	IOSIG_LAYOUT_SINGLE,      /* one device, no redundancy */
	IOSIG_LAYOUT_RAID0,       /* striping over `disks`, no redundancy */
	IOSIG_LAYOUT_RAID1,       /* mirror: `disks` copies, tolerates disks-1 */
	IOSIG_LAYOUT_RAID10,      /* striped mirrors: groups of 2, tolerates 1 per group */
	IOSIG_LAYOUT_RAID5,       /* tolerates 1 */
	IOSIG_LAYOUT_RAID6,       /* tolerates 2 */
	IOSIG_LAYOUT_REPLICATION, /* k-way replication: disks = k, tolerates k-1 */
	IOSIG_LAYOUT_ERASURE,     /* n + m MDS code: disks = n + m, tolerates m */
};

struct iosig_layout {
	uint8_t kind;        /* enum iosig_layout_kind */
	uint8_t reserved0;
	uint16_t disks;      /* d: devices taking part (>= 1) */
	uint16_t tolerated;  /* m: device failures tolerated without loss */
	uint16_t reserved1;
};

/* Labels a mount may carry (config "label:"). */
#define IOSIG_LABEL_ARCHIVE     (1u << 0)
#define IOSIG_LABEL_TAMPERPROOF (1u << 1)

/* Fields of struct iosig_mount whose source is tracked in src[]. */
enum iosig_field {
	IOSIG_F_CLASS,
	IOSIG_F_GLOBAL,
	IOSIG_F_VOLATILE,
	IOSIG_F_ROTATIONAL,
	IOSIG_F_LABELS,
	IOSIG_F_CAPACITY,
	IOSIG_F_FREE,
	IOSIG_F_RESERVE,
	IOSIG_F_BLOCK_SIZE,
	IOSIG_F_MAX_FILESIZE,
	IOSIG_F_SEQ_READ_BW,
	IOSIG_F_SEQ_WRITE_BW,
	IOSIG_F_RAND_READ_BW,
	IOSIG_F_RAND_WRITE_BW,
	IOSIG_F_LATENCY,
	IOSIG_F_SEEK,
	IOSIG_F_IOPS,
	IOSIG_F_MTTF,
	IOSIG_F_MTTR,
	IOSIG_F_BER,
	IOSIG_F_ECC,
	IOSIG_F_SECTOR_BITS,
	IOSIG_F_LAYOUT,
	IOSIG_F_DATA_DIR,
	IOSIG_F_BCW,
	IOSIG_F_COUNT
};

/* Buffered-write profile of a rotational device (BCW paper). */
struct iosig_bcw {
	double wf;  /* W_f: bytes written in the fast state before it ends */
	double wm;  /* W_m: bytes written in the mid state before it ends */
	double lf;  /* L_f: write latency in the fast state, seconds */
	double lm;  /* L_m: write latency in the mid state, seconds */
	double ls;  /* L_s: write latency in the slow state, seconds */
};

/*
 * One candidate mount point.  Strings and the struct itself are owned by the
 * catalog and valid until iosig_catalog_free().
 */
struct iosig_mount {
	const char *path;        /* mount point */
	const char *source;      /* device (/dev/sda1) or remote (host:/export) */
	const char *fstype;      /* ext4, xfs, tmpfs, nfs4 ... */
	const char *data_dir;    /* where redirected files go; NULL if none */
	const char *ineligible;  /* NULL if eligible, else why not (and what to do) */
	uint64_t dev;            /* st_dev of the mount point */
	uint8_t cls;             /* enum iosig_class */
	bool global;             /* visible on all nodes of a job */
	bool volatile_;          /* contents lost on reboot/power loss */
	bool rotational;         /* seeks cost time */
	uint32_t labels;         /* IOSIG_LABEL_* */
	uint64_t capacity;       /* bytes */
	uint64_t free;           /* bytes available to unprivileged users */
	uint64_t reserve;        /* bytes that must stay free after a file is placed */
	uint64_t block_size;     /* effective block size, bytes */
	uint64_t max_filesize;   /* bytes, 0 = unlimited */
	double seq_read_bw;      /* bytes/s */
	double seq_write_bw;     /* bytes/s */
	double rand_read_bw;     /* bytes/s, 0 = same as sequential */
	double rand_write_bw;    /* bytes/s, 0 = same as sequential */
	double latency;          /* operation latency, seconds */
	double seek;             /* average seek latency (random access on rotational), seconds */
	double iops;             /* maximum I/O operations per second */
	double mttf;             /* per device, seconds */
	double mttr;             /* seconds */
	double ber;              /* raw bit error rate */
	uint32_t ecc;            /* correctable bit errors per sector */
	uint32_t sector_bits;    /* ECC sector size N of Eq. 1, bits */
	struct iosig_layout layout;
	struct iosig_bcw bcw;    /* all zero when unknown */
	uint8_t src[IOSIG_F_COUNT]; /* enum iosig_source per enum iosig_field */
	uint64_t reserved[8];
};

/* Options for iosig_catalog_new(); zero-initialise and set what you need. */
struct iosig_catalog_opts {
	const char *config;      /* YAML config; NULL: $IOSIG_CONFIG, else the default
				    locations; "" : no configuration file */
	const char *probe_cache; /* NULL: default location; "" : none */
	const char *mountinfo;   /* NULL: /proc/self/mountinfo */
	unsigned flags;          /* IOSIG_CATALOG_* */
	unsigned reserved0;
	uint64_t reserved[4];
};

/* Only mounts described in the configuration file, nothing discovered (tests,
 * "what would happen on that machine"). */
#define IOSIG_CATALOG_NO_DISCOVERY (1u << 0)

struct iosig_catalog;

/* Build a catalog.  Config errors: -EINVAL with file:line in *err. */
int iosig_catalog_new(const struct iosig_catalog_opts *opts, struct iosig_catalog **ret_catalog,
		      struct iosig_error *err);
void iosig_catalog_free(struct iosig_catalog *catalog);
size_t iosig_catalog_size(const struct iosig_catalog *catalog);
const struct iosig_mount *iosig_catalog_mount(const struct iosig_catalog *catalog, size_t i);
/* The catalog mount a path lives on (deepest mount point containing it, after
 * resolving the path's directory); NULL if none. */
const struct iosig_mount *iosig_catalog_find(const struct iosig_catalog *catalog,
					     const char *path);

const char *iosig_class_name(enum iosig_class cls);
const char *iosig_source_name(enum iosig_source src);
const char *iosig_field_name(enum iosig_field field);
const char *iosig_layout_name(enum iosig_layout_kind kind);

/* ------------------------------------------------------------------------
 * Models (docs/design.md §5.2)
 * ---------------------------------------------------------------------- */

/* IOSIG Eq. 1: uncorrectable bit error rate for raw `ber`, sector size
 * `sector_bits` (N) and `ecc` correctable bits per sector (E). */
double iosig_uber(double ber, unsigned sector_bits, unsigned ecc);

/* IOSIG Eq. 2: MTTDL in seconds of `size` bytes on `layout` with per-device
 * mttf and mttr (seconds) and uncorrectable bit error rate uber. */
double iosig_mttdl(const struct iosig_layout *layout, double mttf, double mttr, double uber,
		   double size);

/* MTTDL of `size` bytes on a catalog mount (0 for volatile storage). */
double iosig_mount_mttdl(const struct iosig_mount *mount, double size);

/* Probability of losing data within `lifetime` seconds: 1 - exp(-T/MTTDL). */
double iosig_p_loss(double mttdl, double lifetime);

enum iosig_op { IOSIG_OP_WRITE, IOSIG_OP_READ };

/* IOSIG Eq. 3: predicted throughput in bytes/s for I/Os of `ds` bytes. */
double iosig_throughput(const struct iosig_mount *mount, uint64_t ds, bool random,
			enum iosig_op op);

/* Result of the Monte Carlo MTTDL estimator. */
struct iosig_mc_result {
	double mean;         /* estimated MTTDL, seconds */
	double stderr_;      /* standard error of the mean, seconds */
	uint64_t trials;     /* simulated lifetimes */
	uint64_t by_failure; /* losses caused by too many device failures */
	uint64_t by_error;   /* losses caused by an uncorrectable error during rebuild */
};

/* Monte Carlo estimate of the MTTDL modelled by iosig_mttdl(): exponential
 * failures and repairs, bit errors during rebuild.  Deterministic for a seed. */
int iosig_mttdl_simulate(const struct iosig_layout *layout, double mttf, double mttr,
			 double uber, double size, uint64_t trials, uint64_t seed,
			 struct iosig_mc_result *ret_result);

/* ------------------------------------------------------------------------
 * Selection (docs/design.md §5.3)
 * ---------------------------------------------------------------------- */

enum iosig_verdict {
	IOSIG_V_OK,          /* satisfies every constraint */
	IOSIG_V_INELIGIBLE,  /* mount->ineligible says why */
	IOSIG_V_GLOBAL,      /* not global */
	IOSIG_V_PERSIST,     /* volatile */
	IOSIG_V_MTTDL,       /* MTTDL below min_mttdl for the file's size */
	IOSIG_V_AVAILABILITY,/* P(loss) over the lifetime above the limit */
	IOSIG_V_ARCHIVE,     /* no archive label */
	IOSIG_V_TAMPER,      /* no tamperproof label */
	IOSIG_V_SPACE,       /* free space < totalsize + reserve */
	IOSIG_V_FILESIZE,    /* totalsize > max file size */
};

/* What selection thought of one mount (for explanations). */
struct iosig_candidate {
	const struct iosig_mount *mount;
	int verdict;        /* enum iosig_verdict */
	double throughput;  /* predicted bytes/s (computed for every candidate) */
	double mttdl;       /* seconds, for the file's size */
	double p_loss;      /* over the lifetime */
	char why[192];      /* the verdict in words, with the numbers */
};

/* The choice. */
struct iosig_choice {
	int index;                        /* catalog index, -1 if nothing qualifies */
	const struct iosig_mount *mount;  /* NULL if nothing qualifies */
	double throughput;                /* predicted bytes/s of the winner */
	unsigned eligible;                /* candidates that passed the filters */
	struct iosig_sig effective;       /* the signature with defaults filled in */
};

/*
 * Choose the mount for a file described by `sig` that the program asked to
 * create at `orig_path` (may be NULL).  When `cands` is not NULL it must hold
 * iosig_catalog_size() entries and receives one record per mount.  Returns 0
 * (also when nothing qualifies: ret->index == -1) or a negative errno.
 */
int iosig_select(const struct iosig_catalog *catalog, const struct iosig_sig *sig,
		 const char *orig_path, struct iosig_candidate *cands,
		 struct iosig_choice *ret_choice);

const char *iosig_verdict_name(enum iosig_verdict verdict);

/* ------------------------------------------------------------------------
 * Compiler-generated calls (docs/design.md §4)
 * ---------------------------------------------------------------------- */

#define IOSIG_SITE_ABI 1

/*
 * Static, read-only descriptor of one annotated call site, emitted by the
 * compiler plugins.
 */
struct iosig_site {
	uint32_t abi;         /* IOSIG_SITE_ABI */
	uint32_t nvalues;     /* run-time values passed after the fixed arguments */
	const char *sig;      /* canonical signature text; "$N" is the N-th value */
	const char *file;     /* source file of the pragma */
	uint32_t line;        /* line of the pragma */
	uint32_t column;      /* column of the pragma */
	const char *call;     /* the replaced function: "open", "fopen", ... */
};

/*
 * Drop-in replacements for the annotated calls.  The fixed arguments are the
 * original call's (mode is 0 when the original passed none); the variadic
 * arguments are site->nvalues values of type double.  Each returns exactly
 * what the original call would have returned, with the same errno.
 */
int iosig_open(const struct iosig_site *site, const char *path, int flags, mode_t mode, ...);
int iosig_open64(const struct iosig_site *site, const char *path, int flags, mode_t mode, ...);
int iosig_openat(const struct iosig_site *site, int dirfd, const char *path, int flags,
		 mode_t mode, ...);
int iosig_creat(const struct iosig_site *site, const char *path, mode_t mode, ...);
FILE *iosig_fopen(const struct iosig_site *site, const char *path, const char *mode, ...);
FILE *iosig_fopen64(const struct iosig_site *site, const char *path, const char *mode, ...);
FILE *iosig_freopen(const struct iosig_site *site, const char *path, const char *mode,
		    FILE *stream, ...);

/*
 * For calls that cannot be replaced (C++ stream constructors): decide and, if
 * the file is to be created elsewhere, create it there and link it at `path`
 * so that the original call that follows opens it.  `flags` are open(2)
 * flags describing the intended open.  Never fails the program: returns 0 or
 * a negative errno that the caller may ignore.
 */
int iosig_prepare(const struct iosig_site *site, int dirfd, const char *path, int flags, ...);

/*
 * iosig_prepare() for a runtime that forwards an annotated call it replaces
 * itself (libiosig-mpi's iosig_MPI_File_open, iosig_mpi.h): the site's
 * `nvalues` run-time values in an array, `call` naming the replaced call
 * in the decision log.  Returns what iosig_prepare() returns.
 */
int iosig_prepare_values(const struct iosig_site *site, const char *call, int dirfd,
			 const char *path, int flags, const double *values, unsigned nvalues);

/*
 * Around the call of a function the program declared with '#pragma io
 * opener' (a wrapper that opens the file named by one of its arguments):
 * before the call, decide as iosig_open() would for `flags` (or, when
 * `fmode` is not NULL, the fopen mode `fmode`) and, if the file is to be
 * created elsewhere, link the data file's path at `path` (relative to
 * `dirfd`) without creating it: the function's own open creates it through
 * the link.  Returns the path to give the function: `path`, or, when the
 * open is exclusive or does not follow links (O_EXCL, O_NOFOLLOW, mode
 * "x"), which the link would make fail, the data file's absolute path,
 * valid until iosig_opener_end().  After the call, iosig_opener_end() with
 * the same site removes the link if the function created no file.  Never
 * fails the program; errno is left as it was.
 */
const char *iosig_opener_begin(const struct iosig_site *site, int dirfd, const char *path,
			       int flags, const char *fmode, ...);
void iosig_opener_end(const struct iosig_site *site);

/* Records job-level facts (jobwide lifetime, name) for later decisions. */
void iosig_jobwide(const struct iosig_site *site, ...);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* IOSIG_H */
