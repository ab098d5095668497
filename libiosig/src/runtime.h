/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - process-wide state of the redirection runtime (docs/design.md §5.4):
 * the environment switches, the runtime lock (fork-safe), job identity for
 * `global` files and the facts recorded by `#pragma io jobwide`.  Private.
 */
#ifndef IOSIG_RUNTIME_H
#define IOSIG_RUNTIME_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "iosig.h"

/* Where the decision log goes (IOSIG_LOG). */
enum rt_log_kind {
	RT_LOG_NONE,   /* unset or empty: no log */
	RT_LOG_STDERR, /* IOSIG_LOG=stderr */
	RT_LOG_FILE,   /* IOSIG_LOG=<path>, appended to */
};

/* The environment as read at the first annotated call. */
struct rt_env {
	bool disable;              /* IOSIG_DISABLE: pure pass-through */
	bool dryrun;               /* IOSIG_DRYRUN: decide and log, never redirect */
	bool strict;               /* IOSIG_STRICT: fail when no mount qualifies */
	int log_kind;              /* enum rt_log_kind */
	char log_path[PATH_MAX];   /* RT_LOG_FILE: the path as given */
};

/* Internal descriptors the runtime keeps open across calls are moved to
 * numbers >= this, so that "open returns the lowest free descriptor" still
 * holds for the program's own descriptors. */
#define RT_FD_BASE 512

/* The environment snapshot (read once, lazily; never NULL). */
const struct rt_env *rt_env(void);

/*
 * Re-reads the environment.  For tests that change IOSIG_* between cases;
 * must not race with entry points.  The decision log keeps its descriptor
 * until declog_reset() (declog.h): call both when IOSIG_LOG changed.
 */
void rt_env_reload(void);

/* The runtime lock guarding the site cache, the data-directory cache, the
 * log descriptor and the jobwide facts.  pthread_atfork takes it around
 * fork() so a child never inherits it locked.  Never held across a call
 * into the catalog, the parser or the selection. */
void rt_lock(void);
void rt_unlock(void);

/*
 * Moves `fd` to a descriptor >= RT_FD_BASE with FD_CLOEXEC (closing the
 * original) when the limit allows; returns the new descriptor, or `fd`
 * unchanged when it cannot be moved.
 */
int rt_fd_high(int fd);

/*
 * Gives a caller the descriptor the plain call would have returned: moves
 * `fd` to the lowest free number (when that is lower), with FD_CLOEXEC only
 * if `cloexec`.  Consumes fd; returns the descriptor to hand out.
 */
int rt_fd_low(int fd, bool cloexec);

/* Where the job identity came from. */
struct rt_job {
	char id[128];        /* the identity; "" when unknown */
	const char *source;  /* "IOSIG_JOB_ID", "SLURM_JOB_ID", ..., "jobwide name", NULL */
};

/*
 * Job identity for `global` destinations (docs/design.md §9): IOSIG_JOB_ID, then the
 * batch systems and MPI launchers (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID,
 * FLUX_JOB_ID, COBALT_JOBID, PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid,
 * PMI_KVSNAME), then the name given by `#pragma io jobwide name(...)`.
 * Fills *ret_job (id "" when none is known).
 */
void rt_job_identity(struct rt_job *ret_job);

/* Records the facts of an evaluated `jobwide` pragma (lifetime, name). */
void rt_jobwide_set(const struct iosig_sig *sig);

/* Applies the recorded jobwide lifetime to `sig` when it has none. */
void rt_jobwide_apply(struct iosig_sig *sig);

/* Forgets the recorded jobwide facts (tests). */
void rt_jobwide_reset(void);

#endif /* IOSIG_RUNTIME_H */
