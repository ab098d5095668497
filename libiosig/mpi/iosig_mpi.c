/* SPDX-License-Identifier: MIT */
/*
 * iosig_mpi.c - libiosig-mpi: an annotated MPI_File_open (iosig_mpi.h).
 *
 * MPI-IO opens a file collectively: every rank of the communicator calls
 * MPI_File_open with the same name, and the MPI library's own opens (one
 * per rank, or per aggregator) create it.  IOSIG must therefore decide
 * once, before any rank's open: rank 0 runs the redirect's prepare step
 * (decision, data file, link: iosig_prepare_values), broadcasts its
 * result, and only then do all ranks call MPI_File_open on the original
 * name, which the link leads to the data file.  Every rank reaches the
 * same file whatever its own environment says, the link is made by one
 * process with symlinkat (which never replaces anything), and a rank that
 * dies leaves either no link or a complete one: a restart opens an
 * existing path as it is.
 */
#include "iosig_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

/* Most run-time values a site passes (the runtime's own limit). */
#define MPI_MAX_VALUES 64

/* open(2) flags of an MPI-IO access mode. */
static int amode_flags(int amode)
{
	int flags = O_RDONLY;

	if (amode & MPI_MODE_RDWR)
		flags = O_RDWR;
	else if (amode & MPI_MODE_WRONLY)
		flags = O_WRONLY;
	if (amode & MPI_MODE_CREATE)
		flags |= O_CREAT;
	if (amode & MPI_MODE_EXCL)
		flags |= O_EXCL;
	if (amode & MPI_MODE_APPEND)
		flags |= O_APPEND;
	return flags;
}

/* The path MPI_File_open will open: ROMIO takes a filesystem prefix before
 * it ("ufs:/scratch/f"); a name with another colon is a name. */
static const char *strip_prefix(const char *filename)
{
	static const char *const prefixes[] = {
		"ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "panfs:", "xfs:", "beegfs:",
		"daos:", "ime:", "quobytefs:", "testfs:",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(filename, prefixes[i], strlen(prefixes[i])))
			return filename + strlen(prefixes[i]);
	return filename;
}

int iosig_MPI_File_open(const struct iosig_site *site, MPI_Comm comm, const char *filename,
			int amode, MPI_Info info, MPI_File *fh, ...)
{
	double values[MPI_MAX_VALUES];
	unsigned n = 0;
	int rank = 0, r = 0;
	va_list ap;

	va_start(ap, fh);
	if (site && site->abi == IOSIG_SITE_ABI) {
		n = site->nvalues;
		for (unsigned i = 0; i < n && i < MPI_MAX_VALUES; i++)
			values[i] = va_arg(ap, double);
	}
	va_end(ap);
	/* Not collective-safe to decide (invalid communicator, file deleted
	 * on close - the link would go and the data stay): MPI decides. */
	if (comm == MPI_COMM_NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
	    (amode & MPI_MODE_DELETE_ON_CLOSE) || !filename)
		return MPI_File_open(comm, filename, amode, info, fh);
	if (rank == 0) {
		int saved = errno;

		/* A site with more values than values[] holds is refused by
		 * the runtime (its limit is the same) before it reads any. */
		r = iosig_prepare_values(site, "MPI_File_open", AT_FDCWD, strip_prefix(filename),
					 amode_flags(amode), values, n);
		errno = saved;
	}
	/* Everyone waits for the link, and learns a strict refusal. */
	if (MPI_Bcast(&r, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
		r = 0;
	if (r == -ENODEV) {
		MPI_Errhandler eh = MPI_ERRORS_RETURN;

		/* As a failed MPI_File_open, whose errors go to the handler of
		 * MPI_FILE_NULL: MPI_ERRORS_RETURN unless the program set
		 * another (a fatal one aborts; a handler of its own is not
		 * called - Open MPI refuses MPI_File_call_errhandler on
		 * MPI_FILE_NULL). */
		*fh = MPI_FILE_NULL;
		if (MPI_File_get_errhandler(MPI_FILE_NULL, &eh) == MPI_SUCCESS &&
		    eh == MPI_ERRORS_ARE_FATAL)
			MPI_Abort(comm, MPI_ERR_IO);
		if (eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL)
			MPI_Errhandler_free(&eh);
		return MPI_ERR_IO;
	}
	return MPI_File_open(comm, filename, amode, info, fh);
}
