/* SPDX-License-Identifier: MIT */
/*
 * catalog_internal.h - private interfaces of the storage catalog (docs/design.md
 * §5.1): the value sets every source produces, the embedded class
 * defaults, discovery, the configuration file, the probe cache and the data
 * directories.  Symbols here are prefixed cat_ and never exported.
 *
 * How a catalog is built (catalog.c):
 *   1. embedded class defaults (class_defaults.c)        IOSIG_SRC_DEFAULT
 *   2. configuration `defaults:` then `classes: <cls>:`  IOSIG_SRC_CONFIG
 *   3. discovery: mount table, sysfs, statfs (discover.c) IOSIG_SRC_DISCOVERED
 *   4. probe cache (probe_cache.c)                       IOSIG_SRC_PROBED
 *   5. configuration `mounts:` entries (config.c)        IOSIG_SRC_CONFIG
 * A later layer overrides an earlier one field by field; src[] records the
 * layer that set each field last.  Configuration defaults and per-class
 * values refine the embedded defaults (they describe the site's hardware in
 * general), so a measurement of one particular device (discovery, probe)
 * still wins over them; a per-mount entry is the most specific and wins over
 * everything.
 */
#ifndef IOSIG_CATALOG_INTERNAL_H
#define IOSIG_CATALOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "iosig.h"

/* Keys that are not fields of struct iosig_mount; they share the bit space
 * of enum iosig_field in struct cat_values.set. */
enum cat_key_extra {
	CAT_K_IGNORE = IOSIG_F_COUNT, /* config: leave the mount out */
	CAT_K_FSTYPE,                 /* synthetic mounts: filesystem type */
	CAT_K_SOURCE,                 /* synthetic mounts: device or remote */
	CAT_K_FSID,                   /* probe cache: filesystem id */
	CAT_K_PROBED_AT,              /* probe cache: when it was measured */
	CAT_K_COUNT
};

#define CAT_BIT(k) (1u << (k))

/* ---- catalog_util.c: what every file of the catalog uses ---------------- */

/* Fills *err (if not NULL): file, line, column and a printf message. */
void cat_error(struct iosig_error *err, const char *file, int line, int col, const char *fmt,
	       ...) __attribute__((format(printf, 5, 6)));

/* Strings owned by a configuration, a probe cache or a catalog. */
struct cat_strpool {
	char **s;
	size_t n, cap;
};

/* Adds a copy of s; NULL when out of memory. */
char *cat_strpool_add(struct cat_strpool *pool, const char *s);
void cat_strpool_free(struct cat_strpool *pool);

/* snprintf that says whether everything fit (a path cut short must not be
 * used; a message cut short is fine). */
bool cat_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* True if the absolute path `path` is `dir` or below it, component-wise
 * ("/a/bc" is not under "/a/b"); dir "/" holds every absolute path. */
bool cat_path_under(const char *path, const char *dir);

/* A YAML boolean: true/yes/on or false/no/off, any case; false if s is
 * neither. */
bool cat_parse_bool(const char *s, bool *ret);

/* $xdg_var/rel when that variable holds an absolute path, else
 * $HOME/home_sub/rel; false when neither is set (or too long). */
bool cat_user_file(const char *xdg_var, const char *home_sub, const char *rel, char *buf,
		   size_t size);

/* fsid of the filesystem at `path` as the probe cache keys it; 0 if unknown. */
uint64_t cat_path_fsid(const char *path);

/* Fills tolerated from kind and disks (RAID1: disks-1, RAID5: 1 ...). */
void cat_layout_fix(struct iosig_layout *layout);

/* Values for the fields of one mount, as given by one source. */
struct cat_values {
	uint32_t set;            /* CAT_BIT(IOSIG_F_* / CAT_K_*) of the values given */
	uint8_t cls;             /* enum iosig_class */
	bool global;
	bool volatile_;
	bool rotational;
	bool ignore;
	uint32_t labels;         /* IOSIG_LABEL_* */
	uint64_t capacity;       /* bytes */
	uint64_t free;           /* bytes */
	uint64_t reserve;        /* bytes, unless reserve_pct >= 0 */
	double reserve_pct;      /* >= 0: the reserve is this percentage of capacity */
	uint64_t block_size;     /* bytes */
	uint64_t max_filesize;   /* bytes, 0 = unlimited */
	double seq_read_bw;      /* bytes/s */
	double seq_write_bw;
	double rand_read_bw;
	double rand_write_bw;
	double latency;          /* seconds */
	double seek;             /* seconds */
	double iops;
	double mttf;             /* seconds */
	double mttr;             /* seconds */
	double ber;
	uint32_t ecc;
	uint32_t sector_bits;
	struct iosig_layout layout;
	struct iosig_bcw bcw;
	const char *data_dir;    /* config: template with ${USER} etc.; owned elsewhere */
	const char *fstype;      /* synthetic only; owned elsewhere */
	const char *source;      /* synthetic only; owned elsewhere */
	uint64_t fsid;           /* probe cache key */
	double probed_at;        /* probe cache: unix time */
};

/* Copies every value set in `v` into `m`, marking it with `src`.  Strings are
 * copied as pointers; `reserve_pct` (in/out) receives a percentage reserve. */
void cat_values_apply(struct iosig_mount *m, double *reserve_pct, const struct cat_values *v,
		      enum iosig_source src);

/* ---- class_defaults.c ------------------------------------------------- */

/* The embedded defaults of a class (every number documented in
 * docs/catalog.md with its source). */
const struct cat_values *cat_class_defaults(enum iosig_class cls);
/* Short citation for a class default ("IOSIG Table 2", "IOSIG Sect. 7.4"),
 * NULL when the class has no default for the field. */
const char *cat_class_default_origin(enum iosig_class cls, enum iosig_field field);
/* Default reserve when none is configured: this percentage of capacity,
 * at most CAT_RESERVE_MAX bytes. */
#define CAT_RESERVE_PCT 1.0
#define CAT_RESERVE_MAX (1ull << 30)

/* ---- config.c ----------------------------------------------------------- */

/* Position of a key in the configuration file (1-based). */
struct cat_pos {
	int line;
	int col;
};

/* One entry of `mounts:`: an absolute path or an fnmatch(3) pattern. */
struct cat_cfg_mount {
	char *pattern;           /* as written, trailing '/' removed */
	bool glob;               /* contains *, ? or [ */
	struct cat_pos pos;      /* of the pattern */
	struct cat_values v;
	struct cat_pos vpos[CAT_K_COUNT]; /* where each value was given */
};

/* A loaded configuration file. */
struct cat_config {
	char *file;                          /* name used in messages */
	struct cat_values defaults;          /* `defaults:` */
	struct cat_pos defaults_pos[CAT_K_COUNT];
	struct cat_values classes[IOSIG_CLASS_COUNT]; /* `classes: <cls>:` */
	struct cat_pos classes_pos[IOSIG_CLASS_COUNT][CAT_K_COUNT];
	struct cat_cfg_mount *mounts;        /* `mounts:`, in file order */
	size_t nmounts;
	struct cat_strpool pool;             /* strings the values point to */
};

/* Loads a configuration file.  -ENOENT/-EACCES... if it cannot be read,
 * -EINVAL with file:line:column in *err for any error in it. */
int cat_config_load_file(const char *path, struct cat_config **ret_cfg, struct iosig_error *err);
/* The same for a memory buffer; `name` is used in messages. */
int cat_config_load_buffer(const char *name, const char *buf, size_t len,
			   struct cat_config **ret_cfg, struct iosig_error *err);
void cat_config_free(struct cat_config *cfg);

/*
 * Which configuration file to use: opts_config if not NULL, else
 * $IOSIG_CONFIG, else $XDG_CONFIG_HOME/iosig/config.yaml (~/.config/...)
 * when it exists, else /etc/iosig/config.yaml when it exists.  Writes the
 * path to buf ("" = none) and sets *ret_explicit when it was given
 * explicitly (a missing explicit file is an error).
 */
void cat_config_locate(const char *opts_config, char *buf, size_t size, bool *ret_explicit);

/* Value types of the configuration and probe-cache schema. */
enum cat_type {
	CAT_T_BOOL,
	CAT_T_SIZE,     /* bytes: 64MiB, 1.5*GiB */
	CAT_T_TIME,     /* seconds: 10*y, 0.1ms */
	CAT_T_RATE,     /* bytes/s: 430MiB/s */
	CAT_T_PROB,     /* fraction: 1e-6, 1ppm */
	CAT_T_COUNT,    /* plain non-negative number: iops */
	CAT_T_UINT,     /* whole number */
	CAT_T_RESERVE,  /* size or percentage */
	CAT_T_STRING,
	CAT_T_CLASS,
	CAT_T_LABELS,   /* string or list of strings */
	CAT_T_LAYOUT,   /* name or mapping */
	CAT_T_BCW,      /* mapping wf/wm/lf/lm/ls */
	CAT_T_FSID,     /* hexadecimal filesystem id */
};

/* Parses a scalar of a numeric type (SIZE, TIME, RATE, PROB, COUNT, UINT,
 * RESERVE without '%') into base units.  -EINVAL if it is not one, -ERANGE if
 * out of range; cat_type_expect() gives the text for the message. */
int cat_parse_number(enum cat_type type, const char *text, double *ret_value);
/* What a value of `type` looks like, for messages ("a time such as 10*y"). */
const char *cat_type_expect(enum cat_type type);


/* ---- discover.c --------------------------------------------------------- */

/* One filesystem as discovery saw it. */
struct cat_disc {
	char *path;              /* mount point (unescaped) */
	char *source;            /* device or remote */
	char *fstype;
	char *root;              /* root of the mount within its filesystem */
	int id, parent_id;       /* mountinfo IDs */
	dev_t devno;             /* major:minor from the mount table */
	bool readonly;           /* mounted read-only */
	bool pseudo;             /* pseudo filesystem or under /proc, /sys: not a candidate */
	bool hidden;             /* covered by a later mount: not reachable */
	bool stated;             /* stat/statfs done (candidates only) */
	bool is_dir;             /* mount point is a directory */
	int stat_err;            /* -errno of stat on the mount point, 0 if fine */
	dev_t st_dev;            /* st_dev of the mount point */
	uint64_t fsid;           /* statfs f_fsid */
	int member_cls;          /* md RAID: class of its members if all alike, else -1 */
	long fuse_uid;           /* FUSE: the user_id that mounted it, else -1 */
	struct cat_values v;     /* discovered values */
	char *why;               /* non-NULL: class unknown, this says why */
	char *layout_origin;     /* layout read from the filesystem (discover_dfs.c): where */
	char *layout_why;        /* the filesystem should tell its layout but did not: why */
};

struct cat_disc_table {
	struct cat_disc *fs;
	size_t n;
};

/* Parses the mount table (`mountinfo`, NULL = /proc/self/mountinfo).
 * Marks pseudo and hidden mounts; does not touch the filesystems. */
int cat_discover_table(const char *mountinfo, struct cat_disc_table *ret_table,
		       struct iosig_error *err);
/* stat + statfs + sysfs for the entries whose `skip` is false; fills each
 * entry's values.  sysfs is read once per block device. */
void cat_discover_probe(struct cat_disc_table *table, const bool *skip);
void cat_discover_table_free(struct cat_disc_table *table);
/* The layout of an md array from its sysfs directory (md/level,
 * md/raid_disks); false, *ret_layout untouched, for levels without one
 * (container, multipath ...) or unreadable attributes. */
bool cat_md_layout(int diskfd, struct iosig_layout *ret_layout);
/* True if `fstype` is a pseudo filesystem (never a candidate). */
bool cat_fstype_is_pseudo(const char *fstype);
/* Class of a network filesystem type, or false if it is not one; sets
 * *ret_global to whether it is shared between the nodes of a job. */
bool cat_fstype_network(const char *fstype, bool *ret_global);

/* ---- discover_dfs.c ----------------------------------------------------- */

/* The redundancy of a distributed filesystem, as the mounted filesystem
 * tells it. */
struct cat_dfs_layout {
	struct iosig_layout layout; /* of the set of devices one file lives on */
	unsigned sets;           /* such sets in the filesystem (0: no redundancy at all) */
	char desc[64];           /* "replica 2", "disperse 6 = 4 + 2" */
	char origin[200];        /* where it was read, for `iosig devices --sources` */
};

/*
 * Reads the layout of the filesystem of type `fstype` mounted at `path`
 * (GlusterFS: the FUSE client's graph, docs/catalog.md).  0 with *ret
 * filled; -EOPNOTSUPP for a type that tells nothing (no message); another
 * -errno with the reason in why[wsize] when it should but cannot be read.
 */
int cat_dfs_layout(const char *path, const char *fstype, struct cat_dfs_layout *ret,
		   char *why, size_t wsize);

/* The GlusterFS client graph (volfile) `text` of `len` bytes -> *ret (all
 * but origin).  0, or -EINVAL with the line and the problem in why. */
int cat_gluster_volfile_layout(const char *text, size_t len, struct cat_dfs_layout *ret,
			       char *why, size_t wsize);

/* ---- probe_cache.c ------------------------------------------------------ */

/* One cached measurement of a mount.  The key is (path, fstype, source,
 * fsid): an entry whose key differs from the mounted filesystem is stale. */
struct cat_probe_entry {
	const char *path;        /* mount point */
	struct cat_pos pos;      /* where the entry starts in the file */
	struct cat_values v;     /* v.fstype, v.source, v.fsid: the key;
				    v.probed_at; the measured values */
};

struct cat_probe_cache {
	struct cat_probe_entry *e;
	size_t n;
	struct cat_strpool pool; /* the entries' strings */
};

/* Copies the measured values (CAT_PROBE_FIELDS) set in src over dst. */
void cat_probe_merge(struct cat_values *dst, const struct cat_values *src);

/*
 * What `iosig probe` measured on one mount, for cat_probe_store().  Set the
 * identity with cat_probe_record_init() from the catalog mount, then the
 * measured values and their CAT_BIT(IOSIG_F_*) bits in `set`.  Fields that
 * can be stored: SEQ_READ_BW, SEQ_WRITE_BW, RAND_READ_BW, RAND_WRITE_BW,
 * LATENCY, SEEK, IOPS, BLOCK_SIZE, BCW.
 */
struct cat_probe_record {
	const char *path;        /* mount point */
	const char *fstype;      /* identity of the filesystem measured */
	const char *source;
	uint64_t fsid;
	double probed_at;        /* unix time; 0 = now */
	uint32_t set;            /* CAT_BIT(IOSIG_F_*) of the values below */
	double seq_read_bw;      /* bytes/s */
	double seq_write_bw;
	double rand_read_bw;
	double rand_write_bw;
	double latency;          /* operation latency, seconds */
	double seek;             /* average seek, seconds */
	double iops;
	uint64_t block_size;     /* effective block size, bytes */
	struct iosig_bcw bcw;    /* HDD buffered-write profile */
};

/* Mask of the fields a probe record may carry. */
#define CAT_PROBE_FIELDS                                                                  \
	(CAT_BIT(IOSIG_F_SEQ_READ_BW) | CAT_BIT(IOSIG_F_SEQ_WRITE_BW) |                   \
	 CAT_BIT(IOSIG_F_RAND_READ_BW) | CAT_BIT(IOSIG_F_RAND_WRITE_BW) |                 \
	 CAT_BIT(IOSIG_F_LATENCY) | CAT_BIT(IOSIG_F_SEEK) | CAT_BIT(IOSIG_F_IOPS) |        \
	 CAT_BIT(IOSIG_F_BLOCK_SIZE) | CAT_BIT(IOSIG_F_BCW))

/* Zeroes *rec and fills its identity from a (discovered) catalog mount. */
void cat_probe_record_init(struct cat_probe_record *rec, const struct iosig_mount *mount);

/*
 * Stores a measurement in the probe cache `file` (NULL: the default for this
 * user, see cat_probe_cache_locate()): reads the cache, replaces the entry of
 * rec->path (values measured again replace the old ones; an entry for
 * another filesystem at that path is dropped), writes a new file and renames
 * it into place, under an exclusive lock so concurrent writers do not lose
 * updates.  A corrupt cache is replaced.  Creates the directory (0700 for a
 * user cache, 0755 for the system cache).  0 or -errno with *err filled.
 */
int cat_probe_store(const char *file, const struct cat_probe_record *rec, struct iosig_error *err);

/* Loads a probe cache.  -ENOENT if absent; -EINVAL with file:line in *err if
 * it is not a valid cache (the catalog then ignores it with a note). */
int cat_probe_cache_load(const char *file, struct cat_probe_cache **ret_cache,
			 struct iosig_error *err);
int cat_probe_cache_load_buffer(const char *name, const char *buf, size_t len,
				struct cat_probe_cache **ret_cache, struct iosig_error *err);
void cat_probe_cache_free(struct cat_probe_cache *cache);
/* The entry for a mount point, or NULL. */
const struct cat_probe_entry *cat_probe_cache_find(const struct cat_probe_cache *cache,
						   const char *path);

/*
 * Probe caches to read, in order (a later one overrides): `opts_cache` alone
 * when not NULL ("" = none); else $IOSIG_PROBE_CACHE alone when set; else
 * the system cache /var/cache/iosig/probe.yaml and, for a user other than
 * root, $XDG_CACHE_HOME/iosig/probe.yaml (~/.cache/iosig/probe.yaml).
 * Returns how many paths were written to bufs (at most 2).
 */
unsigned cat_probe_cache_locate(const char *opts_cache, char bufs[2][4096]);
/* Where `iosig probe` writes: $IOSIG_PROBE_CACHE, else the system cache for
 * root, else the user cache. */
void cat_probe_cache_write_path(char *buf, size_t size);

#define CAT_PROBE_CACHE_VERSION 1
#define CAT_SYSTEM_PROBE_CACHE "/var/cache/iosig/probe.yaml"
#define CAT_SYSTEM_CONFIG "/etc/iosig/config.yaml"

/* ---- datadir.c ---------------------------------------------------------- */

/* Who the data directories are for, gathered once per catalog build. */
struct cat_datadir_ctx {
	uid_t uid;               /* effective uid */
	char user[256];          /* login name ("" until looked up / unknown) */
	bool user_looked_up;
	char home[4096];         /* realpath of $HOME ("" if unset) */
	char cache_home[4096];   /* realpath-resolved $XDG_CACHE_HOME or $HOME/.cache */
	/* every visible mount point, to tell which mount a path is on */
	const char *const *mount_paths;
	size_t nmount_paths;
};

void cat_datadir_ctx_init(struct cat_datadir_ctx *ctx, const char *const *mount_paths,
			  size_t n);

/*
 * Chooses the data directory of a discovered mount without creating it (see
 * docs/catalog.md "Data directories" for the exact rule).  `configured` is
 * the expanded config value or NULL.  On success *ret_dir is a malloc'ed
 * path and 0 is returned; otherwise -ENOENT and *ret_why (malloc'ed) says why
 * and what to do.
 */
int cat_datadir_choose(struct cat_datadir_ctx *ctx, const char *mnt_path, dev_t dev,
		       const char *configured, char **ret_dir, char **ret_why);

/*
 * Expands ${USER}, ${UID}, ${HOME}, ${MOUNT} and a leading ~ in a configured
 * data_dir.  Returns a malloc'ed string or NULL with *ret_why set (malloc'ed).
 */
char *cat_datadir_expand(struct cat_datadir_ctx *ctx, const char *tmpl, const char *mnt_path,
			 char **ret_why);

/* True if `tmpl` only uses the variables cat_datadir_expand() knows; else
 * writes the offending one to bad. */
bool cat_datadir_template_ok(const char *tmpl, char *bad, size_t size);

/*
 * Creates (if needed) and validates the data directory of `mount` for the
 * calling user, and returns an O_DIRECTORY fd to it in *ret_fd.  Every
 * component below the mount point is opened with O_NOFOLLOW relative to its
 * parent; missing ones are created 0700; each must be on the mount's
 * filesystem; intermediate directories must belong to root or the user and
 * be sticky if others may write them; the directory itself must belong to
 * the user and not be writable by others.  Safe when several processes race
 * to create it.  0 or -errno (-ELOOP symlink, -EPERM wrong owner or unsafe
 * permissions, -EXDEV other filesystem, -ENOENT no data directory) with the
 * reason in *err.
 */
int cat_datadir_open(const struct iosig_mount *mount, int *ret_fd, struct iosig_error *err);

/*
 * Opens the existing directory `dir` on `mount` as a data directory of
 * `uid`, after the checks cat_datadir_open() makes (no symbolic link, every
 * directory passed through root's or uid's and sticky if others may write
 * it, all on the mount's filesystem, `dir` itself uid's and not writable by
 * group or others), creating nothing: for the target of a link that claims
 * to be one the runtime made (rd_link.c).  0 with an O_RDONLY|O_DIRECTORY
 * fd in *ret_fd, or -errno (-ENOENT when a component is missing) with the
 * reason in *err.
 */
int cat_datadir_open_existing(const struct iosig_mount *mount, const char *dir, uid_t uid,
			      int *ret_fd, struct iosig_error *err);

/* ---- catalog.c ---------------------------------------------------------- */

/*
 * The process-wide catalog, built once (pthread_once) on first use with
 * IOSIG_CONFIG / IOSIG_PROBE_CACHE honoured, and never freed.  Returns NULL
 * if it could not be built; *err (if not NULL) then says why, every time.
 */
const struct iosig_catalog *cat_default(struct iosig_error *err);

/* Notes gathered while building (ignored probe cache entries, ...). */
size_t cat_catalog_notes(const struct iosig_catalog *catalog);
const char *cat_catalog_note(const struct iosig_catalog *catalog, size_t i);
/* iosig_catalog_find() without resolving links: the deepest visible mount
 * whose mount point is a prefix of the normalised `path` (for paths the
 * runtime wrote itself, such as a link's target, which it then checks
 * component by component anyway). */
const struct iosig_mount *cat_catalog_find_lexical(const struct iosig_catalog *catalog,
						   const char *path);
/* The configuration file actually used ("" if none). */
const char *cat_catalog_config_file(const struct iosig_catalog *catalog);
/* Where a field's value of mount i came from beyond its source: the
 * citation of a DEFAULT value, or what discovery read a DISCOVERED one from
 * (a distributed filesystem's layout); NULL if nothing is recorded. */
const char *cat_catalog_origin(const struct iosig_catalog *catalog, size_t i,
			       enum iosig_field field);

/* Builds a catalog from an already loaded configuration (may be NULL); used
 * by iosig_catalog_new() and the fuzz target. */
int cat_catalog_build(const struct iosig_catalog_opts *opts, const struct cat_config *cfg,
		      struct iosig_catalog **ret_catalog, struct iosig_error *err);

#endif /* IOSIG_CATALOG_INTERNAL_H */
