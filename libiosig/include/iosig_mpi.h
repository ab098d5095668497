/* SPDX-License-Identifier: MIT */
/*
 * iosig_mpi.h - the MPI-IO entry point of IOSIG, in libiosig-mpi (built
 * against the MPI implementation the program uses; link with
 * -liosig-mpi -liosig).  See iosig.h for the rest of the API and
 * docs/runtime.md "MPI-IO".
 */
#ifndef IOSIG_MPI_H
#define IOSIG_MPI_H

#include <mpi.h>

#include "iosig.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * What a compiler plugin makes of an annotated MPI_File_open(comm,
 * filename, amode, info, fh): collective over `comm`, like MPI_File_open.
 * Rank 0 of `comm` decides with its values (the variadic arguments, doubles
 * as for iosig_open) and, when the file is to be created elsewhere
 * (MPI_MODE_CREATE, the path does not exist yet), creates the data file and
 * the link at `filename`; then every rank opens `filename` with
 * MPI_File_open, so every rank reaches the same file.  The decision is
 * made once, and the other ranks wait for it (one MPI_Bcast), so no rank
 * creates `filename` before the link is there.  Returns what MPI_File_open
 * returns; with IOSIG_STRICT set and no mount satisfying the signature,
 * every rank returns MPI_ERR_IO and opens nothing (MPI_Abort instead if
 * the program made MPI_FILE_NULL's error handler MPI_ERRORS_ARE_FATAL).
 * MPI_MODE_DELETE_ON_CLOSE opens are left to MPI_File_open: deleting the
 * name would leave the data behind.
 */
int iosig_MPI_File_open(const struct iosig_site *site, MPI_Comm comm, const char *filename,
			int amode, MPI_Info info, MPI_File *fh, ...);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* IOSIG_MPI_H */
