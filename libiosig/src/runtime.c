/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - process-wide state of the redirection runtime: the IOSIG_*
 * switches (IOSIG_CONFIG belongs to the catalog), the fork-safe runtime
 * lock, job identity for `global` files and the jobwide facts.
 */
#include "runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "env.h"

static pthread_mutex_t rt_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static struct rt_env env;

/* Facts of `#pragma io jobwide`, guarded by rt_mutex. */
static struct {
	bool has_lifetime;
	double lifetime;     /* seconds */
	char name[64];       /* "" when none */
} jobwide;

static void env_read(void)
{
	const char *log = env_get("IOSIG_LOG");

	env.disable = env_flag("IOSIG_DISABLE");
	env.dryrun = env_flag("IOSIG_DRYRUN");
	env.strict = env_flag("IOSIG_STRICT");
	env.log_kind = RT_LOG_NONE;
	env.log_path[0] = '\0';
	if (log && *log) {
		if (!strcmp(log, "stderr") || !strcmp(log, "-")) {
			env.log_kind = RT_LOG_STDERR;
		} else if (strlen(log) < sizeof(env.log_path)) {
			env.log_kind = RT_LOG_FILE;
			strcpy(env.log_path, log);
		}
		/* A path longer than PATH_MAX cannot be opened: no log. */
	}
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&rt_mutex);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&rt_mutex);
}

static void rt_init(void)
{
	env_read();
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

const struct rt_env *rt_env(void)
{
	pthread_once(&rt_once, rt_init);
	return &env;
}

void rt_env_reload(void)
{
	pthread_once(&rt_once, rt_init);
	rt_lock();
	env_read();
	rt_unlock();
}

void rt_lock(void)
{
	pthread_once(&rt_once, rt_init);
	pthread_mutex_lock(&rt_mutex);
}

void rt_unlock(void)
{
	pthread_mutex_unlock(&rt_mutex);
}

int rt_fd_low(int fd, bool cloexec)
{
	int low = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);

	if (low >= 0 && low < fd) {
		close(fd);
		return low;
	}
	if (low >= 0)
		close(low);
	if (!cloexec)
		fcntl(fd, F_SETFD, 0);
	return fd;
}

int rt_fd_high(int fd)
{
	struct rlimit rl;
	int nfd;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur <= RT_FD_BASE + 64)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, RT_FD_BASE);
	if (nfd < 0)
		return fd;
	close(fd);
	return nfd;
}

/* Launcher and batch-system variables naming the job, most specific first. */
static const char *const job_vars[] = {
	"IOSIG_JOB_ID",            /* explicit override */
	"SLURM_JOB_ID",            /* Slurm */
	"SLURM_JOBID",             /* Slurm, older name */
	"PBS_JOBID",               /* PBS Pro, Torque */
	"LSB_JOBID",               /* IBM LSF */
	"FLUX_JOB_ID",             /* Flux */
	"COBALT_JOBID",            /* Cobalt */
	"PMIX_NAMESPACE",          /* PMIx launchers (Open MPI >= 4, prrte, srun --mpi=pmix) */
	"OMPI_MCA_ess_base_jobid", /* Open MPI mpirun */
	"PMI_KVSNAME",             /* PMI-1 launchers that export the KVS name (MPICH family) */
};

void rt_job_identity(struct rt_job *ret_job)
{
	ret_job->id[0] = '\0';
	ret_job->source = NULL;
	for (size_t i = 0; i < sizeof(job_vars) / sizeof(job_vars[0]); i++) {
		const char *v = env_get(job_vars[i]);

		if (v && *v && strlen(v) < sizeof(ret_job->id)) {
			strcpy(ret_job->id, v);
			ret_job->source = job_vars[i];
			return;
		}
	}
	rt_lock();
	if (jobwide.name[0]) {
		strcpy(ret_job->id, jobwide.name);
		ret_job->source = "jobwide name";
	}
	rt_unlock();
}

void rt_jobwide_set(const struct iosig_sig *sig)
{
	rt_lock();
	if ((sig->set & IOSIG_HAS(IOSIG_P_LIFETIME)) && sig->lifetime > 0) {
		jobwide.has_lifetime = true;
		jobwide.lifetime = sig->lifetime;
	}
	if ((sig->set & IOSIG_HAS(IOSIG_P_NAME)) && sig->name[0]) {
		strncpy(jobwide.name, sig->name, sizeof(jobwide.name) - 1);
		jobwide.name[sizeof(jobwide.name) - 1] = '\0';
	}
	rt_unlock();
}

void rt_jobwide_apply(struct iosig_sig *sig)
{
	if (sig->set & IOSIG_HAS(IOSIG_P_LIFETIME))
		return;
	rt_lock();
	if (jobwide.has_lifetime) {
		sig->lifetime = jobwide.lifetime;
		sig->set |= IOSIG_HAS(IOSIG_P_LIFETIME);
	}
	rt_unlock();
}

void rt_jobwide_reset(void)
{
	rt_lock();
	memset(&jobwide, 0, sizeof(jobwide));
	rt_unlock();
}
