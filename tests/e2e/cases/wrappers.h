/*
 * How three real programs open their output files, reproduced (same
 * shapes, same system calls, same special cases) so that the e2e cases can
 * annotate them where they are called:
 *
 *   fopen_output_safely(name, mode)   bzip2 1.0.8 (bzip2.c): creates the file
 *       with open(O_WRONLY|O_CREAT|O_EXCL, 0600), then fdopen()s it;
 *   output_file_open(file, text)      sqlite3 3.40 shell (shell.c): the names
 *       "stdout", "stderr" and "off" are not files, anything else is
 *       fopen()ed "w" or "wb";
 *   openat(fd, file, flags, mode)     gnulib (fcntl-safer.h) renames openat to
 *       openat_safer, which opens with openat() and moves a result of 0, 1
 *       or 2 above the standard streams;
 *   osOpen(file, flags, mode)         sqlite3 (os_unix.c) calls open through a
 *       table of system-call pointers, reached by a macro.
 *
 * Not a case of its own: cases include it.
 */
#ifndef IOSIG_E2E_WRAPPERS_H
#define IOSIG_E2E_WRAPPERS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* bzip2: never overwrite, and keep the output private until it is done. */
static inline FILE *fopen_output_safely(char *name, const char *mode)
{
	FILE *fp;
	int fh;

	fh = open(name, O_WRONLY | O_CREAT | O_EXCL, S_IWUSR | S_IRUSR);
	if (fh == -1)
		return NULL;
	fp = fdopen(fh, mode);
	if (fp == NULL)
		close(fh);
	return fp;
}

/* sqlite3 shell: .output, .once, .log and .trace name a file or a stream. */
static inline FILE *output_file_open(const char *zFile, int bTextMode)
{
	FILE *f;

	if (strcmp(zFile, "stdout") == 0) {
		f = stdout;
	} else if (strcmp(zFile, "stderr") == 0) {
		f = stderr;
	} else if (strcmp(zFile, "off") == 0) {
		f = 0;
	} else {
		f = fopen(zFile, bTextMode ? "w" : "wb");
		if (f == 0)
			fprintf(stderr, "Error: cannot open \"%s\"\n", zFile);
	}
	return f;
}

/* gnulib fd_safer: a descriptor that is not 0, 1 or 2. */
static inline int fd_safer(int fd)
{
	if (STDIN_FILENO <= fd && fd <= STDERR_FILENO) {
		int f = fcntl(fd, F_DUPFD, STDERR_FILENO + 1);
		int e = errno;

		close(fd);
		errno = e;
		fd = f;
	}
	return fd;
}

/* gnulib openat_safer. */
static inline int openat_safer(int fd, char const *file, int flags, ...)
{
	mode_t mode = 0;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return fd_safer(openat(fd, file, flags, mode));
}

/* gnulib fcntl-safer.h, seen by the program's own files. */
#undef openat
#define openat openat_safer

/* sqlite3 os_unix.c: system calls through a table that tests can change. */
static inline int posixOpen(const char *zFile, int flags, int mode)
{
	return open(zFile, flags, mode);
}

typedef void (*sqlite3_syscall_ptr)(void);

static struct unix_syscall {
	const char *zName;
	sqlite3_syscall_ptr pCurrent;
} aSyscall[] __attribute__((unused)) = {
	{ "open", (sqlite3_syscall_ptr)posixOpen },
};

#define osOpen ((int (*)(const char *, int, int))aSyscall[0].pCurrent)

#endif /* IOSIG_E2E_WRAPPERS_H */
