/* SPDX-License-Identifier: MIT */
/*
 * dstdio.c - stdio on annotated files, for the iosigd tests
 * (daemon_test.py, group stdio), built twice like dwork: plainly (run under
 * iosig-redirect, whose rules tag the files) and with the gcc plugin (its
 * pragma tags them).
 *
 *   dstdio DIR     one of every stdio use on files DIR/s-*; prints what each
 *                  call returned, to compare with a plain run (byte-identical
 *                  output and files); leaves DIR/s-exit written but not
 *                  closed (exit flushes it)
 *   dstdio DIR MiB writes MiB to DIR/s-fill through a stream, fflush, fclose;
 *                  prints "error <errno name or ok> by fclose": the first
 *                  error any of them reported
 *
 * Exits 0 (the output says what differs), 2 for bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* built by the test too, without the project's flags */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

/* The annotated open: the plugin replaces it by iosig_fopen. */
static FILE *open_tagged(const char *name, const char *mode)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
#pragma io sig sequential size_per_io(64*KiB)
	FILE *fp = fopen(path, mode);

	return fp;
}

#define SHOW(fmt, ...) printf("%-28s " fmt "\n", what, __VA_ARGS__)

/* The annotated open of `name`; a failure ends the program. */
static FILE *opened(const char *what, const char *name, const char *mode)
{
	FILE *fp = open_tagged(name, mode);
	struct stat a, b;
	char path[4200];
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* fileno() is the file's descriptor */
	ok = fp && fileno(fp) >= 0 && !fstat(fileno(fp), &a) && !stat(path, &b) &&
	     a.st_ino == b.st_ino;
	SHOW("%s %s fileno %s", mode, fp ? "open" : strerror(errno), ok ? "is the file" : "wrong");
	if (!fp)
		exit(0);   /* the output says it */
	return fp;
}

static size_t fsize(FILE *fp)
{
	struct stat st;

	return fstat(fileno(fp), &st) ? (size_t)-1 : (size_t)st.st_size;
}

/* Writes mib MiB through an annotated stream; the first error any call
 * reported (a full file system: ENOSPC at the latest by fclose). */
static int fill(int mib)
{
	static char buf[1 << 20];
	FILE *fp = open_tagged("s-fill", "w");
	int err = 0;

	if (!fp) {
		printf("fopen %s\n", strerror(errno));
		return 0;
	}
	memset(buf, 'f', sizeof(buf));
	for (int i = 0; i < mib && !err; i++) {
		if (fwrite(buf, 1, sizeof(buf), fp) != sizeof(buf))
			err = errno;
	}
	if (fflush(fp) && !err)
		err = errno;
	if (fclose(fp) && !err)
		err = errno;
	printf("error %s by fclose\n", err == ENOSPC ? "ENOSPC" : err ? strerror(err) : "ok");
	return 0;
}

int main(int argc, char **argv)
{
	static char big[3 * 1024 * 1024 + 17], back[sizeof(big)];
	const char *what;
	char line[256], path[4200];
	FILE *fp, *ex;
	size_t i, n;
	int c, r, fd;

	if (argc < 2 || argc > 3 || strlen(argv[1]) >= sizeof(dir)) {
		fprintf(stderr, "usage: dstdio DIR [MiB]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	if (argc == 3)
		return fill(atoi(argv[2]));
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + (i * 7 + i / 4096) % 26);

	/* "w": formatted and block writes, positions, fflush, fsync */
	what = "w";
	fp = opened(what, "s-w", "w");
	for (i = 0; i < 2000; i++)
		fprintf(fp, "line %zu: %s\n", i, i % 3 ? "short" : "a somewhat longer line of text");
	SHOW("ftell %ld", ftell(fp));
	SHOW("fwrite %zu", fwrite(big, 1, sizeof(big), fp));
	SHOW("ftell %ld", ftell(fp));
	r = fflush(fp);
	SHOW("fflush %d size %zu", r, fsize(fp));
	SHOW("fsync %d", fsync(fileno(fp)));
	r = fseek(fp, 100, SEEK_SET);
	SHOW("fseek %d ftell %ld", r, ftell(fp));
	fputs("OVERWRITTEN", fp);
	r = fseek(fp, 0, SEEK_END);
	SHOW("fseek end %d ftell %ld", r, ftell(fp));
	fputs("tail\n", fp);
	rewind(fp);
	SHOW("rewind ftell %ld", ftell(fp));
	c = fgetc(fp);
	SHOW("fgetc on w %d ferror %d", c, ferror(fp) != 0);
	clearerr(fp);
	SHOW("fclose %d", fclose(fp));

	/* "r": reads of every kind, ungetc, feof, seeks */
	what = "r";
	fp = opened(what, "s-w", "r");
	SHOW("fgets %s", fgets(line, sizeof(line), fp) ? line : "(null)\n");
	c = fgetc(fp);
	r = ungetc('Z', fp);
	SHOW("fgetc %d ungetc %d fgetc %d", c, r, fgetc(fp));
	SHOW("ftell %ld", ftell(fp));
	SHOW("fseek %d", fseek(fp, -(long)sizeof(big) - 5, SEEK_END));
	n = fread(back, 1, sizeof(back), fp);
	SHOW("fread %zu same %d", n, n == sizeof(big) && !memcmp(back, big, sizeof(big)));
	SHOW("feof %d ferror %d", feof(fp) != 0, ferror(fp) != 0);
	n = fread(back, 1, 10, fp);
	SHOW("fread at end %zu feof %d", n, feof(fp) != 0);
	c = fputc('x', fp);
	SHOW("fputc on r %d ferror %d", c, ferror(fp) != 0);
	SHOW("fclose %d", fclose(fp));

	/* "a" twice: O_APPEND, positions at the end */
	what = "a";
	for (i = 0; i < 2; i++) {
		fp = opened(what, "s-a", "a");
		SHOW("ftell %ld", ftell(fp));
		fprintf(fp, "appended %zu\n", i);
		fwrite(big, 1, 10000 + i, fp);
		SHOW("ftell %ld", ftell(fp));
		SHOW("fclose %d", fclose(fp));
	}

	/* "a+": reads from the start, writes at the end */
	what = "a+";
	fp = opened(what, "s-a", "a+");
	SHOW("fgets %s", fgets(line, sizeof(line), fp) ? line : "(null)\n");
	fseek(fp, 0, SEEK_CUR);
	fputs("more\n", fp);
	r = fflush(fp);
	SHOW("fflush %d ftell %ld size %zu", r, ftell(fp), fsize(fp));
	rewind(fp);
	n = fread(back, 1, sizeof(back), fp);
	SHOW("fread %zu", n);
	SHOW("fclose %d", fclose(fp));

	/* "w+" and "r+": write, read back, overwrite in the middle */
	what = "w+";
	fp = opened(what, "s-rw", "w+");
	fwrite(big, 1, 200000, fp);
	rewind(fp);
	n = fread(back, 1, 200000, fp);
	SHOW("fread %zu same %d", n, n == 200000 && !memcmp(back, big, n));
	SHOW("fclose %d", fclose(fp));
	what = "r+";
	fp = opened(what, "s-rw", "r+");
	fseek(fp, 5000, SEEK_SET);
	fputs("MIDDLE", fp);
	fseek(fp, 4998, SEEK_SET);
	SHOW("fgets %s", fgets(line, 12, fp) ? line : "(null)");
	SHOW("fclose %d", fclose(fp));

	/* setvbuf before the first I/O: unbuffered and a buffer of our own */
	what = "setvbuf";
	fp = opened(what, "s-nbf", "w");
	SHOW("_IONBF %d", setvbuf(fp, NULL, _IONBF, 0));
	fputs("unbuffered ", fp);
	SHOW("size without fflush %zu", fsize(fp));
	SHOW("fclose %d", fclose(fp));
	fp = opened(what, "s-fbf", "w");
	SHOW("_IOFBF %d", setvbuf(fp, line, _IOFBF, 64));
	for (i = 0; i < 100; i++)
		fputs("0123456789", fp);
	SHOW("size without fflush %zu", fsize(fp));
	SHOW("fclose %d", fclose(fp));

	/* freopen of a stream onto another file (not annotated): glibc puts the
	 * new file behind the old descriptor number and, at fclose, frees the
	 * number, which an untagged open then gets */
	what = "freopen";
	fp = opened(what, "s-fr1", "w");
	fputs("before freopen\n", fp);
	snprintf(path, sizeof(path), "%s/s-fr2", dir);
	fp = freopen(path, "w", fp);
	SHOW("freopen %s", fp ? "open" : strerror(errno));
	if (!fp)
		return 0;
	fputs("after freopen\n", fp);
	SHOW("fclose %d", fclose(fp));
	snprintf(path, sizeof(path), "%s/s-fr3", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	SHOW("open %s", fd >= 0 ? "ok" : strerror(errno));
	SHOW("write %zd", write(fd, "plain\n", 6));
	SHOW("close %d", close(fd));

	/* "r" of a missing file and "wx" of an existing one fail as plainly */
	what = "errors";
	errno = 0;
	fp = open_tagged("s-missing", "r");
	SHOW("r missing %s", fp ? "open" : strerror(errno));
	fp = open_tagged("s-w", "wx");
	SHOW("wx existing %s", fp ? "open" : strerror(errno));

	/* A stream exit flushes: written, never closed */
	what = "exit";
	ex = opened(what, "s-exit", "w");
	for (i = 0; i < 300; i++)
		fprintf(ex, "not closed %zu\n", i);
	fflush(stdout);
	return 0;
}
