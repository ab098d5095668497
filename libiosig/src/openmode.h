/* SPDX-License-Identifier: MIT */
/*
 * openmode.h - open(2) flags for the std::ios_base::openmode combinations
 * of [filebuf], one table for both compiler plugins: each emits it into the
 * program it compiles and indexes it with the stream's mode at run time.
 * Private; C and C++.
 */
#ifndef IOSIG_OPENMODE_H
#define IOSIG_OPENMODE_H

#include <fcntl.h>

/* The index has bit 0 = in, 1 = out, 2 = trunc, 3 = app.  Invalid
 * combinations make the stream fail; they get O_RDONLY, which creates
 * nothing. */
static const int openmode_flags[16] = {
	O_RDONLY,                        /* (none): invalid */
	O_RDONLY,                        /* in: "r" */
	O_WRONLY | O_CREAT | O_TRUNC,    /* out: "w" */
	O_RDWR,                          /* in|out: "r+" */
	O_RDONLY,                        /* trunc: invalid */
	O_RDONLY,                        /* in|trunc: invalid */
	O_WRONLY | O_CREAT | O_TRUNC,    /* out|trunc: "w" */
	O_RDWR | O_CREAT | O_TRUNC,      /* in|out|trunc: "w+" */
	O_WRONLY | O_CREAT | O_APPEND,   /* app: "a" */
	O_RDWR | O_CREAT | O_APPEND,     /* in|app: "a+" */
	O_WRONLY | O_CREAT | O_APPEND,   /* out|app: "a" */
	O_RDWR | O_CREAT | O_APPEND,     /* in|out|app: "a+" */
	O_RDONLY,                        /* trunc|app: invalid */
	O_RDONLY,                        /* in|trunc|app: invalid */
	O_RDONLY,                        /* out|trunc|app: invalid */
	O_RDONLY,                        /* in|out|trunc|app: invalid */
};

#endif
